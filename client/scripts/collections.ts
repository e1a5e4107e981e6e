// `PDS_API_KEY=<key> npm run client:collections -- --url <base> --out <file>`: the package's
// `profile-data-client-types` command run from this repository, its output formatted with the
// repository's Prettier. See client/README.md, "Types of your own collections".
import { format, resolveConfig } from 'prettier';
import { runCollectionTypes } from '../src/cli/collection-types.js';

void runCollectionTypes(
  process.argv.slice(2),
  process.env,
  'npm run client:collections --',
  async (text, outFile) =>
    format(text, { ...(await resolveConfig(outFile)), parser: 'typescript' }),
);
