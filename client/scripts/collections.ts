// `PDS_API_KEY=<key> npm run client:collections -- --url <base> --out <file>`: TypeScript types for
// the key's own data collections, from the deployment's GET /data/openapi.json (each collection
// with a JSON Schema has typed items). See README, "Typed clients for your collections".
import { parseCollectionsOptions, UsageError, writeCollectionTypes } from './collection-types';

async function main(): Promise<void> {
  const options = parseCollectionsOptions(process.argv.slice(2), process.env);
  process.stdout.write(`${await writeCollectionTypes(options)}\n`);
}

main().catch((error: unknown) => {
  const message =
    error instanceof UsageError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
