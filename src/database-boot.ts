import { MongoClient } from 'mongodb';
import ConnectionString from 'mongodb-connection-string-url';
import type { Logger } from 'pino';
import { bootDriverOptions } from './common/mongo/bounded-driver-options';
import { isDatabaseUnavailable } from './common/errors/mongo-errors';
import type { AppConfig } from './config';
import { LEGACY_DATABASE_NAME } from './config/database-name';

/**
 * Collections every deployment of the service has from its first start on (index sync creates
 * them): a database holding none of them holds none of the service's data.
 * src/database-boot.spec.ts checks that they are the schemas' collection names.
 */
export const SERVICE_MARKER_COLLECTIONS = ['users', 'api_keys', 'profiles'] as const;

/** A start that must not go on: the message is one line naming what to change. */
export class DatabaseBootError extends Error {
  override name = 'DatabaseBootError';
}

/** The first wait after a failed attempt; it doubles up to BACKOFF_MAX_MS. */
const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 4_000;

/** The server addresses of a URI, without credentials or options: what a log line may show. */
export function databaseAddress(uri: string): string {
  try {
    return new ConnectionString(uri).hosts.join(',');
  } catch {
    return '(unparsable MONGODB_URI)';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Retries `attempt` while it fails because the database cannot be reached, with exponential
 * backoff, until `deadline` (a Date.now() value): a rollout or a cold start whose database
 * answers its first handshakes slowly then waits instead of crash-looping. Any other failure, and
 * the last one at the deadline, is thrown as a one-line DatabaseBootError naming the address and
 * DB_BOOT_TIMEOUT_MS.
 */
export async function retryUntilReachable<T>(
  what: string,
  attempt: () => Promise<T>,
  options: { uri: string; deadline: number; timeoutMs: number; log: Pick<Logger, 'warn'> },
): Promise<T> {
  const address = databaseAddress(options.uri);
  let wait = BACKOFF_FIRST_MS;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      const left = options.deadline - Date.now();
      if (left <= 0) {
        throw new DatabaseBootError(
          `cannot reach the database at ${address} within DB_BOOT_TIMEOUT_MS=${options.timeoutMs} ms ` +
            `(${what}, ${tries} attempts; last: ${reason}): check MONGODB_URI and that the server ` +
            'is up, or raise DB_BOOT_TIMEOUT_MS',
        );
      }
      const next = Math.min(wait, left);
      options.log.warn(
        { database: address, attempt: tries, retryInMs: next, reason },
        `waiting for the database at ${address} (${what})`,
      );
      await sleep(next);
      wait = Math.min(wait * 2, BACKOFF_MAX_MS);
    }
  }
}

async function hasServiceData(client: MongoClient, dbName: string): Promise<boolean> {
  const names = await client
    .db(dbName)
    .listCollections({ name: { $in: [...SERVICE_MARKER_COLLECTIONS] } }, { nameOnly: true })
    .toArray();
  return names.length > 0;
}

/**
 * Pings the database, waiting for it as retryUntilReachable does, and refuses a database named in
 * MONGODB_URI's path that holds none of the service's data while `profile_data` on the same
 * server does: versions before this one ignored the URI's database, so such a deployment would
 * otherwise start silently on an empty database. DB_ALLOW_FRESH_START=true lets it start.
 */
export async function awaitDatabase(
  uri: string,
  database: AppConfig['database'],
  deadline: number,
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  // A client whose first connection failed stays closed ("Topology is closed"): one per attempt,
  // each with the boot timeouts rather than the request-time ones.
  const client = await retryUntilReachable(
    'first ping',
    async () => {
      const attempt = new MongoClient(uri, bootDriverOptions(database, deadline - Date.now()));
      try {
        await attempt.db(database.dbName).command({ ping: 1 });
        return attempt;
      } catch (error) {
        await attempt.close().catch(() => undefined);
        throw error;
      }
    },
    { uri, deadline, timeoutMs: database.bootTimeoutMs, log },
  );
  try {
    if (
      database.dbNameSource !== 'uri' ||
      database.dbName === LEGACY_DATABASE_NAME ||
      database.allowFreshStart
    )
      return;
    if (await hasServiceData(client, database.dbName)) return;
    if (!(await hasServiceData(client, LEGACY_DATABASE_NAME))) return;
    throw new DatabaseBootError(
      `MONGODB_URI names the database "${database.dbName}", which holds none of this service's ` +
        `data, while "${LEGACY_DATABASE_NAME}" on the same server does (earlier versions used it ` +
        `whatever the URI named): to keep that data, change MONGODB_URI's path to ` +
        `"/${LEGACY_DATABASE_NAME}"; to start "${database.dbName}" empty on purpose, set ` +
        'DB_ALLOW_FRESH_START=true',
    );
  } finally {
    await client.close().catch(() => undefined);
  }
}
