import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { join, resolve } from 'node:path';
import { childPort, portForChild } from '../../tools/dev-database';
import type { Document } from 'mongodb';
import { testDatabaseUri, TEST_ADMIN_KEY } from './app';
import { startWireProxy, type WireProxy } from './wire-proxy';

/**
 * The service as it runs in production, `node dist/main.js` in a process of its own: for tests
 * of signals (SIGTERM, SIGKILL) and of several instances sharing one database.
 */
const ROOT = resolve(__dirname, '..', '..');
export const MAIN = join(ROOT, 'dist', 'main.js');

/** The newest modification time of the files under `dir` that `counts` (default: `.ts` files). */
export function newestMtime(
  dir: string,
  counts: (name: string) => boolean = (name) => name.endsWith('.ts'),
): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path, counts));
    else if (counts(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * CI builds dist/ before the tests; a local run builds it only when it is missing or older than
 * the sources, so a test never runs a stale build.
 */
export function ensureBuilt(): void {
  if (existsSync(MAIN) && statSync(MAIN).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  execFileSync(join(ROOT, 'node_modules', '.bin', 'nest'), ['build'], {
    cwd: ROOT,
    stdio: 'ignore',
    timeout: 120_000,
  });
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A body sent as these bytes rather than as JSON (the caller names its Content-Type): with
 * Content-Length, or `chunked`, without it and in pieces of 1 KiB, as a client streaming a body
 * of unknown length does. A DELETE's body goes this way too: Node sends one without
 * Content-Length unframed.
 */
export class RawBody {
  constructor(
    readonly bytes: Buffer,
    readonly chunked = false,
  ) {}
}

/**
 * One HTTP request with node:http (no client-side retries, keep-alive only through `agent`).
 * Without one it goes on a connection of its own: Node's global agent keeps connections alive,
 * and a request sent on one the server is closing (its keep-alive timeout, 5 s, ran out while
 * the test computed something) fails with EPIPE or ECONNRESET before the server sees it.
 * `body`: JSON, or a RawBody.
 */
export function send(
  agent: Agent | undefined,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Reply> {
  return new Promise((resolvePromise, reject) => {
    const raw = body instanceof RawBody ? body : undefined;
    const payload = body === undefined || raw ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: agent ?? false,
        headers: {
          ...headers,
          ...(payload ? { 'Content-Type': 'application/json' } : {}),
          ...(raw && !raw.chunked ? { 'Content-Length': String(raw.bytes.length) } : {}),
        },
        timeout: 15_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    if (!raw) {
      req.on('error', reject);
      req.end(payload);
      return;
    }
    // A refusal before the body is read may close the connection under the rest of it.
    req.on('error', (error) => (req.writableEnded ? undefined : reject(error)));
    if (raw.chunked) {
      for (let at = 0; at < raw.bytes.length; at += 1024)
        req.write(raw.bytes.subarray(at, at + 1024));
      req.end();
    } else req.end(raw.bytes);
  });
}

export interface ServiceProcess {
  /** The port it listens on (known once it is ready). */
  readonly port: number;
  process: ChildProcess;
  /** Resolves when the process exits, with its code and the time it did. */
  exited: Promise<{ code: number | null; at: number }>;
  stdout(): string;
  stderr(): string;
  /** `send` bound to this instance's port (`body`: JSON, or a RawBody). */
  send(
    method: string,
    path: string,
    headers?: Record<string, string>,
    body?: unknown,
  ): Promise<Reply>;
  /** SIGKILL unless already gone; resolves once it has exited. */
  kill(): Promise<void>;
}

/**
 * Starts `dist/main.js` in production mode on the test database, and waits until it answers its
 * readiness probe, on a port no other test's server can take meanwhile (portForChild: a port
 * found free beforehand could be, and this one's requests would reach that server: an unknown
 * key, a 401). `env` overrides the defaults (e.g. MONGODB_DB_NAME: two instances given the same
 * name share one database).
 */
export async function startService(
  env: Record<string, string>,
  readyWithinMs = 30_000,
  /** Called with the process as soon as it is spawned, before it is ready. */
  onSpawn?: (service: ServiceProcess) => void,
): Promise<ServiceProcess> {
  ensureBuilt();
  const given = await portForChild();
  let port: number | undefined;
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(given),
      MONGODB_URI: testDatabaseUri(),
      ADMIN_API_KEY: TEST_ADMIN_KEY,
      RATE_LIMIT_MAX: '1000000',
      AUTH_FAILURE_MAX: '1000000',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; at: number }>((done) =>
    child.once('exit', (code) => done({ code, at: Date.now() })),
  );
  const portOf = () => {
    if (port === undefined) throw new Error('the service does not listen yet');
    return port;
  };
  const service: ServiceProcess = {
    get port() {
      return portOf();
    },
    process: child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    send: (method, path, headers, body) => send(undefined, portOf(), method, path, headers, body),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  onSpawn?.(service);
  const readyBy = Date.now() + readyWithinMs;
  for (;;) {
    port ??= await childPort(child, given, 0);
    const ready =
      port === undefined
        ? undefined
        : await service.send('GET', '/health/ready').catch(() => undefined);
    if (ready?.status === 200) return service;
    if (Date.now() > readyBy || child.exitCode !== null) {
      await service.kill();
      throw new Error(`the service did not become ready:\n${stderr}\n${stdout.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Two instances on one database, each talking to it through a wire proxy of its own. */
export interface ProxiedInstances {
  a: ServiceProcess;
  b: ServiceProcess;
  proxyA: WireProxy;
  proxyB: WireProxy;
  /** Kills both instances (SIGKILL where they still run), then closes both proxies. */
  close(): Promise<void>;
}

/**
 * Starts two instances with `env`, each behind its own proxy, so that a test can hold or drop a
 * chosen command of one of them; `hold` is set on both proxies before either instance starts
 * (a command neither may send until the test lets it go).
 */
export async function startProxiedInstances(
  env: Record<string, string>,
  hold?: (command: Document) => boolean,
): Promise<ProxiedInstances> {
  const [proxyA, proxyB] = await Promise.all([
    startWireProxy(testDatabaseUri()),
    startWireProxy(testDatabaseUri()),
  ]);
  if (hold) {
    proxyA.hold(hold);
    proxyB.hold(hold);
  }
  const [a, b] = await Promise.all([
    startService({ ...env, MONGODB_URI: proxyA.uri }),
    startService({ ...env, MONGODB_URI: proxyB.uri }),
  ]);
  return {
    a,
    b,
    proxyA,
    proxyB,
    close: async () => {
      await Promise.all([a.kill(), b.kill()]);
      await Promise.all([proxyA.close(), proxyB.close()]);
    },
  };
}
