import { createServer } from 'node:net';
import { isAbsolute, relative } from 'node:path';
import { findFreePort, portForChild } from './ports';
import { startFerretDb } from './ferretdb';
import { startMemoryServer } from './memory-server';
import type { DevDatabaseSettings } from './settings';

export type DatabaseKind = 'external' | 'mongodb-memory-server' | 'ferretdb';

export interface DatabaseResolutionOptions extends DevDatabaseSettings {
  /** MONGODB_URI; when set it is used as is (kind 'external'), nothing is started. */
  uri?: string;
  /** Fixed loopback port for the embedded server; default: a free port. */
  port?: number;
  log: (message: string) => void;
  /** More FerretDB command-line flags, when FerretDB is what starts. */
  ferretdbArgs?: readonly string[];
}

/**
 * What the environment says: MONGODB_URI (read by the service's configuration) and this tool's
 * own settings (DATA_DIR, CACHE_DIR, EMBEDDED_DB, FERRETDB_*).
 */
export type DatabaseSettings = Omit<DatabaseResolutionOptions, 'port' | 'log' | 'ferretdbArgs'>;

export interface ResolvedDatabase {
  kind: DatabaseKind;
  /** Connection string without a database name path, e.g. mongodb://127.0.0.1:40123/ */
  uri: string;
  description: string;
  /** The database server process when one was started here and its pid is known (FerretDB, mongod). */
  pid?: number;
  /** Stops whatever was started (no-op for external); idempotent. */
  stop(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';

/** No database could be found or started; the message says what the user can set. */
export class DatabaseUnavailableError extends Error {
  constructor(readonly attempts: readonly string[] = []) {
    super(
      [
        'No database available. Do one of:',
        '  - set MONGODB_URI=mongodb://host:27017/ (any MongoDB 6+ server)',
        '  - install Go (https://go.dev/dl) so FerretDB can be built on first start',
        '  - set FERRETDB_BIN=/path/to/ferretdb (a FerretDB v1 binary)',
        ...(attempts.length > 0 ? ['What was tried:', ...attempts.map((a) => `  - ${a}`)] : []),
      ].join('\n'),
    );
    this.name = 'DatabaseUnavailableError';
  }
}

/** Fails with a clear message when a fixed port is taken (otherwise the server's own error is cryptic). */
function assertPortFree(port: number, host = LOOPBACK): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE' ? new Error(`port ${host}:${port} is already in use`) : error,
      ),
    );
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve()));
  });
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, ' | ').trim();
}

/** Data paths read better relative to the working directory, where `.data` usually lives. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/**
 * Finds the database the service should use: MONGODB_URI when given, otherwise an embedded
 * server started for this process (mongodb-memory-server, else FerretDB built from source).
 * Calling it again with the same dataDir and port after stop() brings back the same server.
 */
export async function resolveDatabase(
  options: DatabaseResolutionOptions,
): Promise<ResolvedDatabase> {
  const { log } = options;
  if (options.uri) {
    log('database: MONGODB_URI is set, using it');
    return {
      kind: 'external',
      uri: options.uri,
      description: `MongoDB at ${redact(options.uri)}`,
      stop: () => Promise.resolve(),
    };
  }

  const attempts: string[] = [];
  const port = async (): Promise<number> => {
    if (options.port === undefined) return findFreePort();
    await assertPortFree(options.port);
    return options.port;
  };

  if (options.embedded === 'auto' || options.embedded === 'mongodb-memory-server') {
    try {
      const server = await startMemoryServer({
        dataDir: options.dataDir,
        host: LOOPBACK,
        port: await port(),
      });
      const address = new URL(server.uri).host;
      log(`database: mongodb-memory-server (MongoDB ${server.version}) listening on ${address}`);
      return {
        kind: 'mongodb-memory-server',
        uri: server.uri,
        description: `mongodb-memory-server (MongoDB ${server.version}) at ${address}, data in ${displayPath(server.dataDir)}`,
        pid: server.pid,
        stop: () => server.stop(),
      };
    } catch (error) {
      const reason = messageOf(error);
      attempts.push(`mongodb-memory-server: ${reason}`);
      log(`database: mongodb-memory-server unavailable (${reason}), trying FerretDB`);
    }
  } else {
    log('database: EMBEDDED_DB=ferretdb, using FerretDB');
  }

  try {
    const server = await startFerretDb({
      dataDir: options.dataDir,
      cacheDir: options.cacheDir,
      version: options.ferretdbVersion,
      bin: options.ferretdbBin,
      host: LOOPBACK,
      // Without a fixed port, one the kernel picks: no other server can take it meanwhile.
      port: options.port === undefined ? await portForChild() : await port(),
      log,
      args: options.ferretdbArgs,
    });
    const address = new URL(server.uri).host;
    return {
      kind: 'ferretdb',
      uri: server.uri,
      description: `FerretDB ${server.version} (SQLite) at ${address}, data in ${displayPath(server.dataDir)}`,
      pid: server.pid,
      stop: () => server.stop(),
    };
  } catch (error) {
    const reason = messageOf(error);
    attempts.push(`FerretDB: ${reason}`);
    log(`database: FerretDB unavailable (${reason})`);
  }

  throw new DatabaseUnavailableError(attempts);
}

/** The description is logged; a password in MONGODB_URI must not be. */
function redact(uri: string): string {
  try {
    const url = new URL(uri);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return uri.replace(/\/\/[^@/]*@/, '//***@');
  }
}
