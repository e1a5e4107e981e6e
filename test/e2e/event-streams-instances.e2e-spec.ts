import { request, type IncomingHttpHeaders } from 'node:http';
import { MongoClient } from 'mongodb';
import { TEST_ADMIN_KEY, testDatabaseUri, uniqueDbName } from '../support/app';
import { startService, type ServiceProcess } from '../support/service-process';
import { until } from '../support/until';

/**
 * A key's streams are counted over every instance (docs/events.md, "How many streams"): real
 * instances (`node dist/main.js`) on one database, a key limited to K streams by
 * EVENTS_MAX_STREAMS_PER_KEY or by its plan's `streamsPerKey`. Streams opened at once through two
 * instances end with exactly K open and the rest refused with 429 TOO_MANY_STREAMS; a closed
 * stream lets one more in; a lowered limit refuses new streams only. An instance killed with
 * SIGKILL leaves its slots to their lease (EVENTS_STREAM_LEASE_MS, short here), one stopped with
 * SIGTERM gives them back before it exits.
 */
const K = 3;
const LEASE_MS = 3000;
const PLAN_CACHE_MS = 1000;
/** For the requests themselves (a probe, the write's answer) on a shared, busy machine. */
const MARGIN_MS = 1000;
const READY_WITHIN_MS = 90_000;
const ENV = {
  LOG_LEVEL: 'warn',
  EVENTS_MAX_STREAMS_PER_KEY: String(K),
  EVENTS_STREAM_LEASE_MS: String(LEASE_MS),
  PLAN_CACHE_MS: String(PLAN_CACHE_MS),
};
const HOUR = 3_600_000;
const OPERATOR = { 'X-Api-Key': TEST_ADMIN_KEY };
const dbName = uniqueDbName(__filename);
let a: ServiceProcess;
let b: ServiceProcess;
const others: ServiceProcess[] = [];
let client: MongoClient;
const opened: Stream[] = [];

const start = (): Promise<ServiceProcess> =>
  startService({ ...ENV, MONGODB_DB_NAME: dbName }, READY_WITHIN_MS);

beforeAll(async () => {
  [a, b] = await Promise.all([start(), start()]);
  client = new MongoClient(testDatabaseUri());
}, 3 * READY_WITHIN_MS);

afterEach(async () => {
  for (const stream of opened.splice(0)) stream.close();
  // The next test counts its own slots only.
  await until('every slot given back', async () => (await liveSlots()) === 0);
});

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill(), ...others.map((s) => s.kill())]);
  await client?.db(dbName).dropDatabase();
  await client?.close();
});

/** A stream request's answer: an open stream (200), or a refusal and its body. */
interface Stream {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** True once the server ended the response. */
  ended(): boolean;
  close(): void;
}

function openStream(service: ServiceProcess, key: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const req = request(
      {
        host: '127.0.0.1',
        port: service.port,
        path: '/events/stream',
        headers: { 'X-Api-Key': key },
        agent: false,
      },
      (res) => {
        let ended = false;
        res.once('end', () => (ended = true));
        res.once('close', () => (ended = true));
        const stream: Stream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: '',
          ended: () => ended,
          close: () => req.destroy(),
        };
        if (stream.status === 200) {
          opened.push(stream);
          res.resume();
          settled = true;
          return resolve(stream);
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (stream.body += chunk));
        res.once('end', () => {
          settled = true;
          resolve(stream);
        });
      },
    );
    req.on('error', (error) => (settled ? undefined : reject(error)));
    req.end();
  });
}

async function call(
  service: ServiceProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const reply = await service.send(method, path, OPERATOR, body);
  if (reply.status !== 200) throw new Error(`${method} ${path}: ${reply.status} ${reply.body}`);
  return JSON.parse(reply.body) as Record<string, unknown>;
}

async function newUser(via: ServiceProcess = a): Promise<{ subject: string; key: string }> {
  const created = await call(via, 'POST', '/admin/users', {
    email: `streams-${Math.random().toString(36).slice(2)}@example.com`,
  });
  return {
    subject: (created.profile as { subject: string }).subject,
    key: created.apiKey as string,
  };
}

/** The refusal of a stream over the key's limit: 429 TOO_MANY_STREAMS naming the limit. */
function expectRefused(stream: Stream, limit: number): void {
  expect(stream.status).toBe(429);
  expect(stream.headers['retry-after']).toBe('5');
  const problem = JSON.parse(stream.body) as { code: string; detail: string };
  expect(problem.code).toBe('TOO_MANY_STREAMS');
  expect(problem.detail).toContain(`This API key holds ${limit} event streams`);
  expect(problem.detail).toContain('over all instances');
}

/** Slots whose lease runs, over every key (each test's keys are the only ones holding any). */
const liveSlots = (): Promise<number> =>
  client
    .db(dbName)
    .collection('event_stream_slots')
    .countDocuments({ leaseUntil: { $gte: new Date() } });

/** Opens `count` streams of `key` at once, alternating between the instances given. */
const openAtOnce = (key: string, count: number, via: ServiceProcess[]): Promise<Stream[]> =>
  Promise.all(Array.from({ length: count }, (_, i) => openStream(via[i % via.length]!, key)));

it('streams opened at once through two instances end with exactly K open, the rest 429; a closed one lets one more in', async () => {
  const user = await newUser();
  const streams = await openAtOnce(user.key, 12, [a, b]);
  const open = streams.filter((s) => s.status === 200);
  expect(open).toHaveLength(K);
  for (const refused of streams.filter((s) => s.status !== 200)) expectRefused(refused, K);
  expect(await liveSlots()).toBe(K);

  // Closing one frees its place once the server has seen the client go: one more gets in.
  open[0]!.close();
  await until('the closed stream to give its slot back', async () => (await liveSlots()) === K - 1);
  const next = await openAtOnce(user.key, 4, [b, a]);
  expect(next.filter((s) => s.status === 200)).toHaveLength(1);
  for (const refused of next.filter((s) => s.status !== 200)) expectRefused(refused, K);
  expect(await liveSlots()).toBe(K);
});

it("holds a key to its plan's streamsPerKey on every instance; a lowered limit refuses new streams only", async () => {
  const user = await newUser();
  await call(a, 'PUT', '/admin/plans/streams-two', { limits: { streamsPerKey: 2 } });
  await call(a, 'PUT', `/admin/users/${encodeURIComponent(user.subject)}/plans`, [
    {
      planName: 'streams-two',
      since: new Date(Date.now() - HOUR).toISOString(),
      until: new Date(Date.now() + HOUR).toISOString(),
    },
  ]);
  const limitOn = async (service: ServiceProcess): Promise<number | null | undefined> => {
    const reply = await service.send('GET', '/me', { 'X-Api-Key': user.key });
    const me = JSON.parse(reply.body) as { limits: Record<string, { limit: number | null }> };
    return me.limits.streamsPerKey?.limit;
  };
  for (const service of [a, b])
    await until(
      'the plan on both',
      async () => (await limitOn(service)) === 2,
      PLAN_CACHE_MS + MARGIN_MS,
    );

  const streams = await openAtOnce(user.key, 8, [a, b]);
  const open = streams.filter((s) => s.status === 200);
  expect(open).toHaveLength(2);
  for (const refused of streams.filter((s) => s.status !== 200)) expectRefused(refused, 2);

  // The downgrade: both streams stay open, a new one is refused on either instance.
  await call(a, 'PUT', '/admin/plans/streams-two', { limits: { streamsPerKey: 1 } });
  for (const service of [a, b])
    await until(
      'the lowered plan on both',
      async () => (await limitOn(service)) === 1,
      PLAN_CACHE_MS + MARGIN_MS,
    );
  for (const service of [a, b]) expectRefused(await openStream(service, user.key), 1);
  expect(open.map((s) => s.ended())).toEqual([false, false]);

  // One closed leaves the key at its new limit: still refused. Both closed: one gets in.
  open[0]!.close();
  await until('the first slot back', async () => (await liveSlots()) === 1);
  expectRefused(await openStream(b, user.key), 1);
  open[1]!.close();
  await until('the second slot back', async () => (await liveSlots()) === 0);
  const again = await openAtOnce(user.key, 3, [b, a]);
  expect(again.filter((s) => s.status === 200)).toHaveLength(1);
});

it('frees the slots of an instance killed with SIGKILL within EVENTS_STREAM_LEASE_MS', async () => {
  const c = await start();
  others.push(c);
  const user = await newUser();
  const held = await openAtOnce(user.key, K, [c]);
  expect(held.map((s) => s.status)).toEqual(Array(K).fill(200));
  expectRefused(await openStream(a, user.key), K);

  const killedAt = performance.now();
  await c.kill();
  // Its slots outlive it: their lease was renewed within the last third of it.
  expectRefused(await openStream(a, user.key), K);
  const first: Stream[] = [];
  await until(
    'a stream of the key to open through A',
    async () => {
      const stream = await openStream(a, user.key);
      if (stream.status === 200) first.push(stream);
      return first.length > 0;
    },
    LEASE_MS + MARGIN_MS,
  );
  console.log(
    `slots of the killed instance freed after ${Math.round(performance.now() - killedAt)} ms`,
  );
  // Every one of them: K in all again, and not one more.
  const rest = await openAtOnce(user.key, K, [a, b]);
  expect(rest.filter((s) => s.status === 200)).toHaveLength(K - 1);
  expect(await liveSlots()).toBe(K);
});

it('gives the slots of an instance stopped with SIGTERM back before it exits', async () => {
  const d = await start();
  others.push(d);
  const user = await newUser();
  const held = await openAtOnce(user.key, K, [d]);
  expect(held.map((s) => s.status)).toEqual(Array(K).fill(200));
  expectRefused(await openStream(b, user.key), K);

  d.process.kill('SIGTERM');
  const { code } = await d.exited;
  expect(code).toBe(0);
  expect(held.map((s) => s.ended())).toEqual(Array(K).fill(true));
  expect(await liveSlots()).toBe(0);
  const next = await openAtOnce(user.key, K, [a, b]);
  expect(next.map((s) => s.status)).toEqual(Array(K).fill(200));
});
