import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { join, resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import { ShutdownState } from '../../src/health/shutdown.state';
import { findFreePort } from '../../tools/dev-database';
import { createTestApp, testDatabaseUri, TEST_ADMIN_KEY, uniqueDbName } from '../support/app';

const ROOT = resolve(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'main.js');
const SHUTDOWN_TIMEOUT_MS = 10_000;
const CLIENTS = 10;
/** Bounds on the load: per client, and for the whole run. */
const MAX_REQUESTS_PER_CLIENT = 300;
const LOAD_BEFORE_SIGTERM_MS = 700;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The service is tested as it runs in production: `node dist/main.js` in its own process, which
 * is what receives SIGTERM. CI builds dist/ before the tests; a local run builds it only when it
 * is missing or older than the sources, so the test never runs a stale build.
 */
function ensureBuilt(): void {
  if (existsSync(MAIN) && statSync(MAIN).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  execFileSync(join(ROOT, 'node_modules', '.bin', 'nest'), ['build'], {
    cwd: ROOT,
    stdio: 'ignore',
    timeout: 120_000,
  });
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(
  agent: Agent | undefined,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Reply> {
  return new Promise((resolvePromise, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          ...headers,
          ...(payload ? { 'Content-Type': 'application/json' } : {}),
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
    req.on('error', reject);
    req.end(payload);
  });
}

interface Outcome {
  id: string;
  status?: number;
  connectionClose?: boolean;
  error?: string;
  afterSigterm: boolean;
}

describe('graceful drain', () => {
  let child: ChildProcess | undefined;

  afterAll(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('finishes in-flight keep-alive writes on SIGTERM, resets none, and exits 0 quickly', async () => {
    ensureBuilt();
    const port = await findFreePort();
    const dbName = uniqueDbName(__filename);
    const uri = testDatabaseUri();
    const proc = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        MONGODB_URI: uri,
        MONGODB_DB_NAME: dbName,
        ADMIN_API_KEY: TEST_ADMIN_KEY,
        RATE_LIMIT_MAX: '1000000',
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let stdout = '';
    let stderr = '';
    proc.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    proc.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<{ code: number | null; at: number }>((done) =>
      proc.once('exit', (code) => done({ code, at: Date.now() })),
    );

    // Ready: answers its readiness probe.
    const readyBy = Date.now() + 30_000;
    for (;;) {
      const ready = await send(undefined, port, 'GET', '/health/ready').catch(() => undefined);
      if (ready?.status === 200) break;
      if (Date.now() > readyBy || proc.exitCode !== null) {
        throw new Error(`the service did not become ready:\n${stderr}\n${stdout.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const created = await send(
      undefined,
      port,
      'POST',
      '/admin/users',
      { 'X-Api-Key': TEST_ADMIN_KEY },
      { email: 'drain@example.com' },
    );
    expect(created.status).toBe(200);
    const apiKey = (JSON.parse(created.body) as { apiKey: string }).apiKey;

    let sigtermAt = 0;
    const outcomes: Outcome[] = [];
    const agents = Array.from(
      { length: CLIENTS },
      () => new Agent({ keepAlive: true, maxSockets: 1 }),
    );
    const clients = agents.map(async (agent, client) => {
      for (let n = 0; n < MAX_REQUESTS_PER_CLIENT; n++) {
        const id = `c${client}-${n}`;
        const outcome: Outcome = { id, afterSigterm: sigtermAt > 0 };
        outcomes.push(outcome);
        try {
          const reply = await send(
            agent,
            port,
            'POST',
            '/data/drain',
            { 'X-Api-Key': apiKey },
            { item: { _id: id, client, n } },
          );
          outcome.status = reply.status;
          outcome.connectionClose = reply.headers.connection === 'close';
        } catch (error) {
          outcome.error = (error as NodeJS.ErrnoException).code ?? String(error);
          // The server is gone or refusing: this client is done.
          return;
        }
      }
    });

    await new Promise((r) => setTimeout(r, LOAD_BEFORE_SIGTERM_MS));
    sigtermAt = Date.now();
    proc.kill('SIGTERM');
    const { code, at } = await exited;
    await Promise.all(clients);
    agents.forEach((agent) => agent.destroy());

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(at - sigtermAt).toBeLessThan(SHUTDOWN_TIMEOUT_MS / 2);

    const answered = outcomes.filter((o) => o.status !== undefined);
    expect(answered.length).toBeGreaterThan(CLIENTS);
    expect(answered.filter((o) => o.status !== 200)).toEqual([]);
    // Requests in flight at SIGTERM were answered, and told the connection closes.
    expect(answered.some((o) => o.connectionClose)).toBe(true);

    const db = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
    try {
      const ids = new Set(
        (
          await db
            .db(dbName)
            .listCollections({}, { nameOnly: true })
            .toArray()
            .then(async (collections) => {
              const all: string[] = [];
              for (const { name } of collections) {
                const docs = await db
                  .db(dbName)
                  .collection<{ _id: unknown }>(name)
                  .find({}, { projection: { _id: 1 } })
                  .toArray();
                all.push(...docs.map((d) => String(d._id)));
              }
              return all;
            })
        ).filter((id) => /^c\d+-\d+$/.test(id)),
      );
      // Every acknowledged write is stored.
      expect(answered.filter((o) => !ids.has(o.id)).map((o) => o.id)).toEqual([]);
      // A request that failed at the connection never reached a handler: nothing was written.
      const failed = outcomes.filter((o) => o.error !== undefined);
      expect(failed.filter((o) => ids.has(o.id))).toEqual([]);
      expect(failed.every((o) => o.afterSigterm)).toBe(true);
      await db.db(dbName).dropDatabase();
    } finally {
      await db.close();
    }

    // Production stdout: JSON lines only.
    const lines = stdout.split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
  }, 150_000); // a local run may first rebuild dist/

  it('fails readiness at once while draining, without touching the database', async () => {
    const t = await createTestApp(__filename);
    try {
      await t.http().get('/health/ready').expect(200);
      t.app.get(ShutdownState).startDraining();
      const res = await t.http().get('/health/ready');
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      await t.http().get('/health').expect(200);
    } finally {
      await t.close();
    }
  });
});
