// `npm run client:generate`: writes client/openapi.json (the document the built service serves at
// /docs-json, keys sorted) and client/src/schema.d.ts (its types, by openapi-typescript).
import { writeFileSync } from 'node:fs';
import {
  DOCUMENT_FILE,
  fetchDocument,
  formatDocument,
  generateTypes,
  TYPES_FILE,
} from './document';
import { describeFailure, withService } from './service';

async function generate(): Promise<void> {
  const log = (message: string): void => void process.stdout.write(`${message}\n`);
  const document = await withService(log, (service) => fetchDocument(service.baseUrl));
  const text = await formatDocument(document);
  writeFileSync(DOCUMENT_FILE, text);
  writeFileSync(TYPES_FILE, await generateTypes(text));
  log(
    `wrote client/openapi.json (${text.trimEnd().split('\n').length} lines) and client/src/schema.d.ts`,
  );
}

generate().catch((error: unknown) => {
  process.stderr.write(`${describeFailure(error)}\n`);
  process.exit(1);
});
