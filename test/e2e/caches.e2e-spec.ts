import { createTestApp, nativeCollection, uniqueDbName, type TestApp } from '../support/app';
import { createApiKey, createSubKey, createUser, type TestUser } from '../support/factories';
import { holdClock, moveClock } from '../support/held-clock';
import { as } from '../support/http';
import { expectProblem } from '../support/problems';

/**
 * The API-key and collection-registry caches keep the rules: two instances on one database,
 * each trusting what it read for CACHE_MS. A removal through an instance is seen there by the
 * next request, through another one within CACHE_MS; expiry is never cached.
 */
const CACHE_MS = 1500;
/**
 * Past a cache entry's end: lru-cache reads its clock at most once a millisecond, and an entry
 * is stale only once strictly older than its ttl.
 */
const PAST_MS = 25;
let a: TestApp;
let b: TestApp;
let user: TestUser;

beforeAll(async () => {
  const shared = {
    MONGODB_DB_NAME: uniqueDbName(__filename),
    API_KEY_CACHE_MS: String(CACHE_MS),
    REGISTRY_CACHE_MS: String(CACHE_MS),
  };
  a = await createTestApp(__filename, shared);
  b = await createTestApp(__filename, shared);
  user = await createUser(a);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until CACHE_MS after `readBefore`, a moment after an instance read (and cached) what
 * the test removed since: from then on its next request must see the removal. The bound is
 * asserted at a moment the test chooses, so a slow request cannot make it fail or pass.
 */
async function pastCacheOf(readBefore: number): Promise<void> {
  await sleep(readBefore + CACHE_MS + PAST_MS - Date.now());
}

describe('the API-key cache', () => {
  it('stops a revoked key at once on the instance that revoked it, and within API_KEY_CACHE_MS on another', async () => {
    const extra = await createApiKey(a, user);
    // Both instances have looked the key up.
    await as(a, extra).get('/me').expect(200);
    await as(b, extra).get('/me').expect(200);
    const cachedBy = Date.now();
    await as(a, user).delete(`/api-keys/${extra.key.id}`).expect(204);
    const revokedAt = Date.now();
    const here = await as(a, extra).get('/me');
    expectProblem(here, 401, 'UNAUTHENTICATED');
    // The other instance trusts what it read: the cache is in use...
    const there = await as(b, extra).get('/me');
    const tookMs = Date.now() - revokedAt;
    if (tookMs < CACHE_MS) expect(there.status).toBe(200);
    // ...and stops trusting it within API_KEY_CACHE_MS.
    await pastCacheOf(cachedBy);
    expectProblem(await as(b, extra).get('/me'), 401, 'UNAUTHENTICATED');
  });

  it('stops the keys of a deleted sub profile at once on the instance that deleted it', async () => {
    const sub = await createSubKey(a, user);
    await as(a, sub).get('/me').expect(200);
    await as(a, user).delete(`/profile/${sub.accountId}`).expect(204);
    expectProblem(await as(a, sub).get('/me'), 401, 'UNAUTHENTICATED');
  });

  it('refuses an expired key on every instance as soon as it expires, cached or not', async () => {
    // The apps' clock stands still until the test moves it to the expiry (the caches' own clock
    // runs on): both instances use the key before it however slow the requests are.
    holdClock();
    try {
      const expiresAt = Date.now() + 1200;
      const expiring = await createApiKey(a, user, {
        expiresAt: new Date(expiresAt).toISOString(),
      });
      await as(a, expiring).get('/me').expect(200);
      await as(b, expiring).get('/me').expect(200);
      moveClock(1200);
      for (const instance of [a, b]) {
        const res = await as(instance, expiring).get('/me');
        expectProblem(res, 401, 'UNAUTHENTICATED');
        expect(res.body.detail).toMatch(/expired/);
      }
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('the collection-registry cache', () => {
  const count = async (t: TestApp, collection: string) =>
    (await as(t, user).get(`/data/${collection}/count`).expect(200)).body as { count: number };
  const physicalOf = async (collection: string) =>
    (
      await a.connection
        .db!.collection('data_collections')
        .findOne({ tenant: user.subject, branch: '', name: collection })
    )?.physical as string | undefined;

  it('shows the next request on the dropping instance the drop, and the next create a new collection', async () => {
    const collection = `cached${Date.now()}`;
    await as(a, user)
      .post(`/data/${collection}`, { item: { n: 1 } })
      .expect(200);
    await as(a, user)
      .post(`/data/${collection}`, { item: { n: 2 } })
      .expect(200);
    expect(await count(a, collection)).toEqual({ count: 2 });
    const dropped = await physicalOf(collection);

    await as(a, user).delete(`/data/${collection}`).expect(204);
    expect(await count(a, collection)).toEqual({ count: 0 });
    await as(a, user)
      .post(`/data/${collection}`, { item: { n: 3 } })
      .expect(200);
    // The item went to the new collection, not to the one dropped (a stale entry would).
    const created = await physicalOf(collection);
    expect(created).toBeDefined();
    expect(created).not.toBe(dropped);
    const entry = await a.connection
      .db!.collection('data_collections')
      .findOne({ physical: created });
    expect(await nativeCollection(a, entry).countDocuments()).toBe(1);
    expect(await count(a, collection)).toEqual({ count: 1 });
  });

  it('shows another instance a drop within REGISTRY_CACHE_MS', async () => {
    const collection = `elsewhere${Date.now()}`;
    await as(a, user)
      .post(`/data/${collection}`, { item: { n: 1 } })
      .expect(200);
    // b reads the entry now, and trusts it for REGISTRY_CACHE_MS.
    expect(await count(b, collection)).toEqual({ count: 1 });
    const cachedBy = Date.now();
    await as(a, user).delete(`/data/${collection}`).expect(204);
    await as(a, user)
      .post(`/data/${collection}`, { item: { n: 2 } })
      .expect(200);
    await as(a, user)
      .post(`/data/${collection}`, { item: { n: 3 } })
      .expect(200);
    const recreatedAt = Date.now();
    // Still the dropped collection's entry on b (empty now): the cache is in use...
    const stale = await count(b, collection);
    if (Date.now() - recreatedAt < CACHE_MS) expect(stale).toEqual({ count: 0 });
    // ...until REGISTRY_CACHE_MS after b read it.
    await pastCacheOf(cachedBy);
    expect(await count(b, collection)).toEqual({ count: 2 });
  });

  it('shows a collection created through another instance to the next request', async () => {
    const collection = `fresh${Date.now()}`;
    expect(await count(b, collection)).toEqual({ count: 0 });
    await as(a, user)
      .post(`/data/${collection}`, { item: { n: 1 } })
      .expect(200);
    expect(await count(b, collection)).toEqual({ count: 1 });
  });
});
