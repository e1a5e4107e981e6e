import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import type * as MemoryServerModule from 'mongodb-memory-server';

export interface MemoryServerOptions {
  dataDir: string;
  host: string;
  port: number;
}

export interface StartedMemoryServer {
  uri: string;
  version: string;
  dataDir: string;
  /** The mongod process (tests freeze it with SIGSTOP to simulate a hung database). */
  pid?: number;
  stop(): Promise<void>;
}

/** Why the memory server cannot be used at all; other start failures are reported as they are. */
export class MemoryServerUnavailableError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'MemoryServerUnavailableError';
  }
}

function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s*\n\s*/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

function reasonOf(error: unknown, module?: typeof MemoryServerModule): string {
  // DownloadError's message repeats the whole URL over two lines; `msg` is the bare cause.
  if (module && error instanceof module.errors.DownloadError) {
    return oneLine(`download failed: ${error.msg}`);
  }
  return oneLine(error instanceof Error ? error.message : String(error));
}

async function serverVersion(uri: string): Promise<string> {
  const client = new MongoClient(uri, { directConnection: true, serverSelectionTimeoutMS: 2_000 });
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    return typeof info.version === 'string' ? info.version : 'unknown version';
  } catch {
    return 'unknown version';
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * The binary lookup (and its download) is done once per process: a download that failed keeps
 * failing, and each attempt costs several seconds of retries.
 */
let binary: Promise<typeof MemoryServerModule> | undefined;

function loadWithBinary(): Promise<typeof MemoryServerModule> {
  binary ??= (async () => {
    let module: typeof MemoryServerModule;
    try {
      // Loaded lazily: it is a devDependency, absent from production installs.
      module = await import('mongodb-memory-server');
    } catch (error) {
      const code =
        typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      throw new MemoryServerUnavailableError(
        code === 'MODULE_NOT_FOUND'
          ? 'package mongodb-memory-server is not installed'
          : reasonOf(error),
      );
    }
    try {
      // Resolving the binary separately keeps a failed download out of MongoMemoryServer.start,
      // which would print a multi-line stack trace to the console.
      await module.MongoBinary.getPath();
      return module;
    } catch (error) {
      throw new MemoryServerUnavailableError(reasonOf(error, module));
    }
  })();
  return binary;
}

/** Starts mongod through mongodb-memory-server with its data kept in `<dataDir>/mongodb`. */
export async function startMemoryServer(
  options: MemoryServerOptions,
): Promise<StartedMemoryServer> {
  const module = await loadWithBinary();
  const dbPath = join(options.dataDir, 'mongodb');
  await mkdir(dbPath, { recursive: true });

  const server = new module.MongoMemoryServer({
    instance: {
      ip: options.host,
      port: options.port,
      // A restart must come back on the same port: clients hold the URI.
      portGeneration: false,
      dbPath,
      storageEngine: 'wiredTiger',
    },
  });
  try {
    await server.start(true);
  } catch (error) {
    throw new Error(`mongod did not start: ${reasonOf(error, module)}`);
  }

  const uri = `mongodb://${options.host}:${options.port}/`;
  const version = await serverVersion(uri);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    // doCleanup would delete nothing here (dbPath is ours), but false states the intent: keep the data.
    stopping ??= server.stop({ doCleanup: false }).then(() => undefined);
    return stopping;
  };
  return {
    uri,
    version,
    dataDir: dbPath,
    pid: server.instanceInfo?.instance.mongodProcess?.pid,
    stop,
  };
}
