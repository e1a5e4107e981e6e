import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { resolveDatabase, type ResolvedDatabase } from '../../tools/dev-database';

declare global {
  var __TEST_DATABASE__: ResolvedDatabase | undefined;
}

/**
 * Resolves the database once for the e2e run exactly as `npm start` does (MONGODB_URI, else an
 * embedded server with a throw-away data directory) and hands its URI to the test workers.
 */
export default async function globalSetup(): Promise<void> {
  const config = loadConfig({ ...process.env, NODE_ENV: 'test' });
  const database = await resolveDatabase({
    ...config.database,
    dataDir: mkdtempSync(join(tmpdir(), 'pds-test-')),
    log: (message) => process.stdout.write(`${message}\n`),
  });
  process.env.TEST_MONGODB_URI = database.uri;
  process.env.TEST_DATABASE_KIND = database.kind;
  process.stdout.write(`e2e database: ${database.description}\n`);
  globalThis.__TEST_DATABASE__ = database;
}
