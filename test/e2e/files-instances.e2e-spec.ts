import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { MongoClient, type Db } from 'mongodb';
import { tenantDatabaseName } from '../../src/placement/tenant-location';
import { TEST_ADMIN_KEY, testDatabaseUri, uniqueDbName } from '../support/app';
import { startService, type ServiceProcess } from '../support/service-process';
import { until } from '../support/until';

/**
 * Files with real instances (`node dist/main.js`) on one database: a large upload streamed with
 * flat memory, the quota decided in the database for two instances together, and uploads that
 * are cut off or whose instance dies leaving nothing behind.
 */
const MB = 1_000_000;
const QUOTA_FILE_BYTES = 100_000;
const ENV = { LOG_LEVEL: 'warn' };
/**
 * An instance that sweeps soon after an upload goes quiet (a live upload renews its heartbeat
 * every third of this). Only where a sweep is the point: on a busy machine a live upload's
 * renewal can lag behind so short a limit.
 */
const SWEEPING = { ...ENV, FILE_UPLOAD_STALE_MS: '1500', FILE_SWEEP_MS: '200' };
const dbName = uniqueDbName(__filename);
const subjects: string[] = [];
let a: ServiceProcess;
let b: ServiceProcess;
let client: MongoClient;
const sweepers: ServiceProcess[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([
    startService({ ...ENV, MONGODB_DB_NAME: dbName }),
    startService({ ...ENV, MONGODB_DB_NAME: dbName }),
  ]);
  client = new MongoClient(testDatabaseUri());
}, 180_000);

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill(), ...sweepers.map((s) => s.kill())]);
  for (const subject of subjects)
    await client.db(tenantDatabaseName(dbName, { kind: 'user', id: subject })).dropDatabase();
  await client?.db(dbName).dropDatabase();
  await client?.close();
});

async function newUser(): Promise<{ key: string; subject: string }> {
  const reply = await a.send(
    'POST',
    '/admin/users',
    { 'X-Api-Key': TEST_ADMIN_KEY },
    { email: `files-${Math.random().toString(36).slice(2)}@example.com` },
  );
  expect(reply.status).toBe(200);
  const body = JSON.parse(reply.body) as { apiKey: string; profile: { subject: string } };
  subjects.push(body.profile.subject);
  return { key: body.apiKey, subject: body.profile.subject };
}

function tenantDb(subject: string): Db {
  return client.db(tenantDatabaseName(dbName, { kind: 'user', id: subject }));
}

/** Deterministic bytes: block i of a file is the SHA-256 chain from `seed`, 32 bytes at a time. */
function* blocks(seed: string, total: number, blockBytes = 64 * 1024): Generator<Buffer> {
  let state = createHash('sha256').update(seed).digest();
  for (let sent = 0; sent < total; sent += blockBytes) {
    const block = Buffer.alloc(Math.min(blockBytes, total - sent));
    for (let i = 0; i < block.length; i += 32) {
      state = createHash('sha256').update(state).digest();
      state.copy(block, i);
    }
    yield block;
  }
}

/** The server process's resident memory (bytes), from /proc. */
function rssOf(service: ServiceProcess): number {
  const status = readFileSync(`/proc/${service.process.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** Starts a raw upload of `declared` bytes; the caller writes the body. */
function startUpload(
  service: ServiceProcess,
  key: string,
  name: string,
  declared: number,
): { req: ClientRequest; reply: Promise<{ status: number; body: string }> } {
  const req = request({
    host: '127.0.0.1',
    port: service.port,
    method: 'POST',
    path: `/files?name=${encodeURIComponent(name)}`,
    // A connection of its own: one from Node's global agent may be closing already (the
    // service's keep-alive timeout runs out while the test computes the 50 MB digest), and the
    // body would go into a closed socket.
    agent: false,
    headers: {
      'X-Api-Key': key,
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(declared),
    },
  });
  const reply = new Promise<{ status: number; body: string }>((resolve, reject) => {
    let answer: { status: number; body: string } | undefined;
    req.on('response', (res: IncomingMessage) => {
      const received = { status: res.statusCode ?? 0, body: '' };
      answer = received;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (received.body += chunk));
      res.on('end', () => resolve(received));
    });
    // A service that refuses a large upload answers and closes the connection: the write fails,
    // and what it answered and logged (a request's line once it has closed) says why.
    req.on('error', (error: Error) =>
      setTimeout(() => {
        const said = answer ? `${answer.status} ${answer.body.slice(0, 500)}` : 'nothing';
        const log = `${service.stdout().slice(-3000)}${service.stderr().slice(-1000)}`;
        reject(new Error(`${error.message}; the service answered ${said}; its log: ${log}`));
      }, 500),
    );
  });
  return { req, reply };
}

/** Writes `chunks` with backpressure, then ends the request; stops when the request fails. */
async function writeAll(req: ClientRequest, chunks: Iterable<Buffer>): Promise<void> {
  const closed = new Promise<'closed'>((resolve) => req.once('close', () => resolve('closed')));
  for (const chunk of chunks) {
    if (req.destroyed) return;
    if (!req.write(chunk)) {
      const drained = new Promise<'drained'>((resolve) =>
        req.once('drain', () => resolve('drained')),
      );
      if ((await Promise.race([drained, closed])) === 'closed') return;
    }
  }
  req.end();
}

/** Downloads a file's bytes as a digest and a length, never holding them whole. */
function downloadDigest(
  service: ServiceProcess,
  key: string,
  id: string,
): Promise<{ status: number; size: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: service.port,
        path: `/files/${id}/content`,
        headers: { 'X-Api-Key': key },
        agent: false,
      },
      (res) => {
        const hash = createHash('sha256');
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          hash.update(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, size, sha256: hash.digest('hex') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function usedBytes(service: ServiceProcess, key: string): Promise<number> {
  const me = await service.send('GET', '/me', { 'X-Api-Key': key });
  return (JSON.parse(me.body) as { quota: { files: { used: number } } }).quota.files.used;
}

it('streams a 50 MB upload with the resident memory growing less than 30 MB, and downloads it byte-exact from the other instance', async () => {
  const { key } = await newUser();
  const size = 50 * MB;
  const expected = createHash('sha256');
  for (const block of blocks('large', size)) expected.update(block);
  const before = rssOf(a);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(a))), 20);
  let answer: Awaited<ReturnType<typeof startUpload>['reply']>;
  try {
    const { req, reply } = startUpload(a, key, 'large.bin', size);
    await writeAll(req, blocks('large', size));
    answer = await reply;
  } finally {
    // Also when the upload fails: the sampler must not outlive the instance it reads.
    clearInterval(sampler);
  }
  peak = Math.max(peak, rssOf(a));
  expect(answer.status).toBe(201);
  const file = JSON.parse(answer.body) as { id: string; size: number; sha256: string };
  expect(file.size).toBe(size);
  expect(file.sha256).toBe(expected.digest('hex'));
  expect(peak - before).toBeLessThan(30 * MB);
  const download = await downloadDigest(b, key, file.id);
  expect(download).toEqual({ status: 200, size, sha256: file.sha256 });
}, 240_000);

it('stores exactly as many of 20 concurrent uploads over two instances as the quota fits (10)', async () => {
  // A quota of exactly ten files: these instances share one configuration but the quota.
  const quota = 10 * QUOTA_FILE_BYTES;
  const env = { ...ENV, MONGODB_DB_NAME: dbName, FILE_QUOTA_BYTES: String(quota) };
  const [c, d] = await Promise.all([startService(env), startService(env)]);
  try {
    const { key } = await newUser();
    const replies = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const { req, reply } = startUpload(i % 2 === 0 ? c : d, key, `f${i}.bin`, QUOTA_FILE_BYTES);
        await writeAll(req, blocks(`q${i}`, QUOTA_FILE_BYTES));
        return reply;
      }),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(10).fill(201), ...Array(10).fill(409)]);
    for (const refused of replies.filter((r) => r.status === 409))
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'FILE_QUOTA_EXCEEDED' });
    const list = await c.send('GET', '/files?limit=100', { 'X-Api-Key': key });
    expect((JSON.parse(list.body) as unknown[]).length).toBe(10);
    expect(await usedBytes(d, key)).toBe(quota);
  } finally {
    await Promise.all([c.kill(), d.kill()]);
  }
}, 180_000);

it('leaves nothing of an upload its client cuts off: no file, no chunk, no bytes counted', async () => {
  const { key, subject } = await newUser();
  const { req, reply } = startUpload(a, key, 'cut.bin', 5 * MB);
  reply.catch(() => undefined);
  for (const block of blocks('cut', 2 * MB)) req.write(block);
  const chunks = tenantDb(subject).collection('files.chunks');
  await until('chunks of the upload are stored', async () => (await chunks.countDocuments()) > 0);
  req.destroy();
  await until('the upload is gone', async () => (await chunks.countDocuments()) === 0);
  const list = await a.send('GET', '/files', { 'X-Api-Key': key });
  expect(JSON.parse(list.body)).toEqual([]);
  expect(await usedBytes(b, key)).toBe(0);
  expect(
    await client.db(dbName).collection('file_records').countDocuments({ tenant: subject }),
  ).toBe(0);
}, 60_000);

it('gives up the upload of an instance killed in the middle of it: the sweep of another removes its chunks and gives its bytes back', async () => {
  const { key, subject } = await newUser();
  const doomed = await startService({ ...ENV, MONGODB_DB_NAME: dbName });
  const { req, reply } = startUpload(doomed, key, 'killed.bin', 5 * MB);
  reply.catch(() => undefined);
  req.on('error', () => undefined);
  for (const block of blocks('killed', 2 * MB)) req.write(block);
  const chunks = tenantDb(subject).collection('files.chunks');
  await until('chunks of the upload are stored', async () => (await chunks.countDocuments()) > 0);
  expect(await usedBytes(a, key)).toBe(5 * MB);
  await doomed.kill();
  // What the killed instance left, read before any instance that sweeps is started: the
  // sweeper's first sweeps may remove it before its start is even reported.
  const records = client.db(dbName).collection('file_records');
  expect(await records.countDocuments({ tenant: subject, state: 'uploading' })).toBe(1);
  const sweeper = await startService({ ...SWEEPING, MONGODB_DB_NAME: dbName });
  sweepers.push(sweeper);
  await until(
    'a sweep removed the upload',
    async () =>
      (await chunks.countDocuments()) === 0 &&
      (await records.countDocuments({ tenant: subject })) === 0,
  );
  expect(await usedBytes(b, key)).toBe(0);
}, 120_000);
