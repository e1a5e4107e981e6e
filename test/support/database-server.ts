import { appendFileSync } from 'node:fs';

/**
 * Which server the e2e run talks to, as the server itself reports it (global-setup asks
 * `buildInfo`): 'mongodb' or 'ferretdb'. An external MONGODB_URI may point at either.
 */
export type DatabaseServer = 'mongodb' | 'ferretdb';

export function databaseServer(): DatabaseServer {
  const server = process.env.TEST_DATABASE_SERVER;
  if (server !== 'mongodb' && server !== 'ferretdb')
    throw new Error('TEST_DATABASE_SERVER is not set: run e2e tests through jest (global setup)');
  return server;
}

export const onMongoDB = (): boolean => databaseServer() === 'mongodb';

/** Records what this file does not assert on this server, and why; global-teardown prints it. */
function recordNotRun(reason: string): void {
  const log = process.env.TEST_NOT_RUN_LOG;
  const file = expect.getState().testPath ?? 'unknown file';
  const line = `${file.replace(/^.*\/test\//, 'test/')}: ${reason}`;
  if (log) appendFileSync(log, `${line}\n`);
}

/**
 * Registers tests that assert a guarantee only MongoDB gives (conditional updates re-checked at
 * write time, transactions, TTL indexes, change streams...). On another server the tests are
 * not registered at all — not skipped — and the reason is recorded; global-teardown prints
 * every such line at the end of the run so the output says what was not asserted and why.
 * The file must still hold tests that run everywhere: jest fails a file with none.
 */
export function mongoOnly(reason: string, define: () => void): void {
  if (onMongoDB()) define();
  else recordNotRun(reason);
}

/**
 * The other way round: tests of how the service copes with a behaviour only FerretDB has (and
 * MongoDB cannot be made to show), registered only when the run is on FerretDB.
 */
export function ferretdbOnly(reason: string, define: () => void): void {
  if (onMongoDB()) recordNotRun(reason);
  else define();
}
