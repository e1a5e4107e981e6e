import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { childPort, portForChild } from '../dev-database';

export interface RunningService {
  url: string;
  adminKey: string;
  child: ChildProcess;
  /** SIGTERM (in-flight requests finish), SIGKILL after a grace period; idempotent. */
  stop(): Promise<void>;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** `nest build` when dist/main.js is missing or older than a source file (CI has just built it). */
export function ensureBuilt(root: string, log: (message: string) => void): void {
  const main = join(root, 'dist', 'main.js');
  if (existsSync(main) && statSync(main).mtimeMs >= newestSource(join(root, 'src'))) return;
  log('service: dist/ is missing or older than src/, running `nest build`');
  execFileSync(join(root, 'node_modules', '.bin', 'nest'), ['build'], {
    cwd: root,
    stdio: 'inherit',
    timeout: 300_000,
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export interface ServiceOptions {
  root: string;
  databaseUri: string;
  databaseName: string;
  /** The service's log (errors only: every 5xx is logged with its traceId). */
  logPath: string;
}

/**
 * The built service (`node dist/main.js`) in production mode on a free loopback port, with a
 * fresh operator key and limits high enough that a fuzzer is never rate limited.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const given = await portForChild();
  const adminKey = `contract-${randomBytes(24).toString('base64url')}`;
  const child = spawn(process.execPath, [join(options.root, 'dist', 'main.js')], {
    cwd: options.root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(given),
      MONGODB_URI: options.databaseUri,
      MONGODB_DB_NAME: options.databaseName,
      ADMIN_API_KEY: adminKey,
      LOG_LEVEL: 'error',
      RATE_LIMIT_MAX: '1000000000',
      AUTH_FAILURE_MAX: '1000000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(options.logPath, { flags: 'a' });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (!exited(child)) {
        child.kill('SIGTERM');
        if (!(await waitForExit(child, 15_000))) {
          child.kill('SIGKILL');
          await waitForExit(child, 5_000);
        }
      }
      await new Promise<void>((resolve) => log.end(resolve));
    })());

  const deadline = Date.now() + 60_000;
  const port = await childPort(child, given, 60_000);
  const url = `http://127.0.0.1:${port ?? given}`;
  for (;;) {
    if (exited(child)) {
      await stop();
      throw new Error(
        `the service exited with ${child.exitCode ?? child.signalCode} before it was ready (log: ${options.logPath})`,
      );
    }
    const ready = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return { url, adminKey, child, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the service was not ready within 60 s (log: ${options.logPath})`);
    }
    await sleep(100);
  }
}
