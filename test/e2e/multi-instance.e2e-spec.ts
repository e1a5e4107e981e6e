import { MongoClient } from 'mongodb';
import { TEST_ADMIN_KEY, testDatabaseUri, uniqueDbName } from '../support/app';
import { startService, type Reply, type ServiceProcess } from '../support/service-process';

/**
 * Two instances of the service (`node dist/main.js`, production mode) on one database: every
 * limit and every uniqueness rule holds for both together, because each is decided in the
 * database, never in one process's memory. Requests are spread over both instances and sent
 * concurrently.
 */
const RATE_LIMIT_MAX = 20;
const WINDOW_MS = 60_000;
const MAX_COLLECTIONS = 3;
const MAX_INDEXES = 2;
const dbName = uniqueDbName(__filename);
let a: ServiceProcess;
let b: ServiceProcess;

beforeAll(async () => {
  const env = {
    MONGODB_DB_NAME: dbName,
    RATE_LIMIT_STORE: 'mongo',
    RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
    RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
    MAX_COLLECTIONS: String(MAX_COLLECTIONS),
    MAX_INDEXES: String(MAX_INDEXES),
  };
  [a, b] = await Promise.all([startService(env), startService(env)]);
}, 180_000);

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill()]);
  const client = new MongoClient(testDatabaseUri());
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
});

/** Instance a for even i, b for odd i. */
const instance = (i: number): ServiceProcess => (i % 2 === 0 ? a : b);
const keyed = (key: string) => ({ 'X-Api-Key': key });
const bodyOf = (reply: Reply) => JSON.parse(reply.body) as Record<string, unknown>;
const statuses = (replies: Reply[]) => replies.map((r) => r.status).sort((x, y) => x - y);

/** A new user's root key; every test uses its own users, so no two share a budget. */
async function newUserKey(): Promise<string> {
  const reply = await a.send('POST', '/admin/users', keyed(TEST_ADMIN_KEY), {
    email: `multi-${Math.random().toString(36).slice(2)}@example.com`,
  });
  expect(reply.status).toBe(200);
  return bodyOf(reply).apiKey as string;
}

/** Waits for the next rate-limit window when fewer than `neededMs` are left in this one. */
async function freshWindow(neededMs: number): Promise<void> {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

function expectProblem(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: bodyOf(reply).code }).toEqual({ status, code });
  expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
}

it(`admits exactly RATE_LIMIT_MAX requests per key and window across both instances, not twice as many`, async () => {
  const key = await newUserKey();
  await freshWindow(20_000);
  const replies = await Promise.all(
    Array.from({ length: 2 * RATE_LIMIT_MAX }, (_, i) =>
      instance(i).send('GET', '/profile', keyed(key)),
    ),
  );
  const admitted = replies.filter((r) => r.status === 200);
  expect(admitted).toHaveLength(RATE_LIMIT_MAX);
  // Each admitted request was counted once: the remaining budgets are 19, 18, …, 0.
  expect(
    admitted.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y),
  ).toEqual(Array.from({ length: RATE_LIMIT_MAX }, (_, i) => i));
  for (const r of admitted) expect(r.headers['x-ratelimit-limit']).toBe(String(RATE_LIMIT_MAX));
  const refused = replies.filter((r) => r.status !== 200);
  expect(refused).toHaveLength(RATE_LIMIT_MAX);
  for (const r of refused) {
    expectProblem(r, 429, 'RATE_LIMITED');
    const retryAfter = Number(r.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
  }
  // Both instances keep refusing the key for the rest of the window; another key is unaffected.
  expectProblem(await a.send('GET', '/profile', keyed(key)), 429, 'RATE_LIMITED');
  expectProblem(await b.send('GET', '/profile', keyed(key)), 429, 'RATE_LIMITED');
  expect((await b.send('GET', '/profile', keyed(await newUserKey()))).status).toBe(200);
});

it('registers exactly MAX_COLLECTIONS collections of concurrent creates across both instances', async () => {
  const key = await newUserKey();
  const replies = await Promise.all(
    Array.from({ length: 2 * MAX_COLLECTIONS }, (_, i) =>
      instance(i).send('POST', `/data/c${i}`, keyed(key), { item: { i } }),
    ),
  );
  expect(statuses(replies)).toEqual([
    ...Array<number>(MAX_COLLECTIONS).fill(200),
    ...Array<number>(MAX_COLLECTIONS).fill(409),
  ]);
  for (const r of replies.filter((r) => r.status !== 200))
    expectProblem(r, 409, 'COLLECTION_QUOTA_EXCEEDED');
  const listed = JSON.parse((await b.send('GET', '/data', keyed(key))).body) as unknown[];
  expect(listed).toHaveLength(MAX_COLLECTIONS);
});

it('builds exactly MAX_INDEXES indexes of concurrent creates across both instances', async () => {
  const key = await newUserKey();
  expect((await a.send('POST', '/data/indexed', keyed(key), { item: { x: 1 } })).status).toBe(200);
  const replies = await Promise.all(
    Array.from({ length: 3 * MAX_INDEXES }, (_, i) =>
      instance(i).send('POST', '/data/indexed/index', keyed(key), { field: `f${i}` }),
    ),
  );
  expect(replies.filter((r) => r.status === 200)).toHaveLength(MAX_INDEXES);
  for (const r of replies.filter((r) => r.status !== 200))
    expectProblem(r, 409, 'INDEX_QUOTA_EXCEEDED');
  const indexes = JSON.parse((await b.send('GET', '/data/indexed/index', keyed(key))).body) as {
    name: string;
  }[];
  expect(indexes.filter((i) => i.name !== '_id_')).toHaveLength(MAX_INDEXES);
});

it('stores exactly one of 50 concurrent creates with one uniqueField value across both instances', async () => {
  const root = await newUserKey();
  // Four keys of one user (one namespace), so that 50 requests stay within each key's budget.
  const keys = [root];
  for (let i = 0; i < 3; i += 1) {
    const minted = await a.send('POST', '/api-keys', keyed(root), {});
    expect(minted.status).toBe(200);
    keys.push(bodyOf(minted).apiKey as string);
  }
  const replies = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      instance(i).send('POST', '/data/people', keyed(keys[i % keys.length] as string), {
        item: { email: 'ada@example.com', n: i },
        uniqueField: 'email',
      }),
    ),
  );
  const stored = replies.filter((r) => r.status === 200);
  expect(stored).toHaveLength(1);
  const winner = bodyOf(stored[0] as Reply)._id;
  for (const r of replies.filter((r) => r.status !== 200)) {
    expectProblem(r, 409, 'DUPLICATE_ITEM');
    expect(bodyOf(r).existingId).toBe(winner);
  }
  const listed = await b.send('GET', '/data/people?email=ada%40example.com', keyed(root));
  expect(JSON.parse(listed.body)).toHaveLength(1);
});
