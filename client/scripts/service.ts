import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import {
  DatabaseUnavailableError,
  findFreePort,
  loadDatabaseSettings,
  resolveDatabase,
  type ResolvedDatabase,
} from '../../tools/dev-database';

/** The repository root; this file runs from dist-dev/client/scripts/. */
export const ROOT = resolve(__dirname, '..', '..', '..');
const MAIN = join(ROOT, 'dist', 'main.js');

export interface RunningService {
  /** e.g. http://127.0.0.1:40123 */
  baseUrl: string;
  /** The operator key (ADMIN_API_KEY) the service was started with. */
  adminKey: string;
  /** Where the database came from, for the log. */
  database: string;
  /** Stops the service, then drops its database and stops whatever was started for it. */
  stop(): Promise<void>;
}

const READY_WITHIN_MS = 60_000;
const STOP_WITHIN_MS = 15_000;

/**
 * The built service (`node dist/main.js`, as production runs it) on a fresh database and a free
 * loopback port, with a new operator key. The database is resolved as the tests resolve theirs
 * (MONGODB_URI, else an embedded server with a throw-away data directory); the service gets a
 * database name of its own, dropped on stop. It runs in an empty working directory with only the
 * variables set here, so a developer's `.env` cannot change what it serves.
 */
export async function startService(log: (message: string) => void): Promise<RunningService> {
  assertBuilt();
  const settings = await loadDatabaseSettings();
  const workDir = mkdtempSync(join(tmpdir(), 'pds-client-'));
  let database: ResolvedDatabase | undefined;
  let child: ChildProcess | undefined;
  const dbName = `client_${randomBytes(4).toString('hex')}`;
  const cleanUp = async (): Promise<void> => {
    if (child) await stopProcess(child);
    if (database) {
      await dropDatabase(database.uri, dbName).catch(() => undefined);
      await database.stop();
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    database = await resolveDatabase({ ...settings, dataDir: join(workDir, 'data'), log });
    const port = await findFreePort();
    const adminKey = `pds_operator_${randomBytes(24).toString('hex')}`;
    const started = spawn(process.execPath, [MAIN], {
      cwd: workDir,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        MONGODB_URI: database.uri,
        MONGODB_DB_NAME: dbName,
        ADMIN_API_KEY: adminKey,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitUntilReady(baseUrl, started, () => output);
    log(`service: ${baseUrl} (dist/main.js) on ${database.description}, database ${dbName}`);
    return { baseUrl, adminKey, database: database.description, stop: cleanUp };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** A precondition the message explains in full (no stack needed). */
export class NotBuiltError extends Error {
  override name = 'NotBuiltError';
}

/** A build older than its sources would serve (and be checked against) yesterday's document. */
function assertBuilt(): void {
  if (!existsSync(MAIN))
    throw new NotBuiltError('dist/main.js is missing: run `npm run build` first');
  const built = statSync(MAIN).mtimeMs;
  const newer = newestFile(join(ROOT, 'src'));
  if (newer && newer.mtimeMs > built) {
    throw new NotBuiltError(
      `dist/ is older than ${relative(ROOT, newer.path)}: run \`npm run build\` first`,
    );
  }
}

function newestFile(dir: string): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const candidate = entry.isDirectory()
      ? newestFile(path)
      : { path, mtimeMs: statSync(path).mtimeMs };
    if (candidate && (!newest || candidate.mtimeMs > newest.mtimeMs)) newest = candidate;
  }
  return newest;
}

async function waitUntilReady(
  baseUrl: string,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const readyBy = Date.now() + READY_WITHIN_MS;
  for (;;) {
    const status = await fetch(`${baseUrl}/health/ready`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return;
    if (child.exitCode !== null || Date.now() > readyBy) {
      throw new Error(
        `the service did not become ready (exit code ${child.exitCode}):\n${output()}`,
      );
    }
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** SIGTERM (the service drains and closes its connection), SIGKILL if it takes too long. */
function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_WITHIN_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** An external MONGODB_URI outlives the run: its database must not. */
async function dropDatabase(uri: string, dbName: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
}

/** Runs `body` against a started service and always stops it, whatever `body` does. */
export async function withService<T>(
  log: (message: string) => void,
  body: (service: RunningService) => Promise<T>,
): Promise<T> {
  const service = await startService(log);
  try {
    return await body(service);
  } finally {
    await service.stop();
  }
}

/** For the scripts' last word: what the user can act on as a message, anything else with its stack. */
export function describeFailure(error: unknown): string {
  if (error instanceof NotBuiltError || error instanceof DatabaseUnavailableError) {
    return error.message;
  }
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
