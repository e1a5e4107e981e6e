import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import ConnectionString from 'mongodb-connection-string-url';
import { loadConfig } from '../../src/config';
import {
  readDevDatabaseSettings,
  resolveDatabase,
  throwawayDataDir,
  type ResolvedDatabase,
} from '../../tools/dev-database';

declare global {
  var __TEST_DATABASE__: ResolvedDatabase | undefined;
  /** Where that database keeps its data: removed at the end of the run. */
  var __TEST_DATA_DIR__: string | undefined;
}

/**
 * Resolves the database once for the e2e run exactly as `npm start` does (MONGODB_URI, else an
 * embedded server with a throw-away data directory) and hands its URI to the test workers.
 */
export default async function globalSetup(): Promise<void> {
  const config = loadConfig({ ...process.env, NODE_ENV: 'test' });
  const dataDir = throwawayDataDir('pds-test-');
  globalThis.__TEST_DATA_DIR__ = dataDir;
  const database = await resolveDatabase({
    ...readDevDatabaseSettings(),
    uri: config.database.uri,
    dataDir,
    log: (message) => process.stderr.write(`${message}\n`),
  });
  // Each test file names its own database (MONGODB_DB_NAME), which the service refuses beside a
  // different one in the URI's path: the workers get the server's address without one.
  process.env.TEST_MONGODB_URI = withoutDatabase(database.uri);
  process.env.TEST_DATABASE_KIND = database.kind;
  process.env.TEST_DATABASE_SERVER = await serverOf(database.uri);
  const notRun = join(mkdtempSync(join(tmpdir(), 'pds-not-run-')), 'not-run.log');
  writeFileSync(notRun, '');
  process.env.TEST_NOT_RUN_LOG = notRun;
  const series = join(mkdtempSync(join(tmpdir(), 'pds-series-')), 'series.log');
  writeFileSync(series, '');
  process.env.TEST_METRIC_SERIES_LOG = series;
  process.stderr.write(
    `e2e database: ${database.description} (server: ${process.env.TEST_DATABASE_SERVER})\n`,
  );
  globalThis.__TEST_DATABASE__ = database;
}

function withoutDatabase(uri: string): string {
  const url = new ConnectionString(uri);
  url.pathname = '/';
  return url.toString();
}

/** FerretDB answers buildInfo with `ferretdbVersion` (v1; `ferretdb` in v2); MongoDB with neither. */
async function serverOf(uri: string): Promise<'mongodb' | 'ferretdb'> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 });
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    return 'ferretdbVersion' in info || 'ferretdb' in info ? 'ferretdb' : 'mongodb';
  } finally {
    await client.close();
  }
}
