import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ObjectId } from 'mongodb';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { exportAs, importAs, resultsOf, type Line } from '../support/ndjson';
import { expectProblem } from '../support/problems';
import { SseClient, type FeedEventData } from '../support/sse';
import { digestApiKey, generateApiKey } from '../../src/auth/api-key.secret';

/**
 * Keys limited to collections (`collections`) and to addresses (`allowedIps`): a limited key
 * never reaches another collection's name, item, count, event or export line, whether that
 * collection exists or not; a key used from outside its addresses is refused before anything
 * else, and its refusals are neither failed authentications nor charged to the rate limit.
 */
const AUTH_FAILURE_MAX = 3;
let t: TestApp;
let port: number;
let user: TestUser;
/** `{"orders":"read","notes*":"write"}`. */
let limited: string;

interface FeedEvent extends FeedEventData {
  collection?: string;
}

/** Inserts a root key of `user` with the given limits (as POST /api-keys will store them). */
async function limitedKey(limits: {
  collections?: Record<string, 'read' | 'write'>;
  allowedIps?: string[];
}): Promise<{ secret: string; id: string }> {
  const keys = t.connection.collection('api_keys');
  const own = await keys.findOne({ digest: digestApiKey(user.apiKey) });
  if (!own) throw new Error('the user has no root key');
  const { secret, digest, prefix } = generateApiKey();
  const _id = new ObjectId();
  await keys.insertOne({
    ...own,
    _id,
    digest,
    prefix,
    name: 'limited',
    scopes: null,
    collections: limits.collections ?? null,
    allowedIps: limits.allowedIps ?? null,
    createdAt: new Date(),
  });
  return { secret, id: _id.toHexString() };
}

const get = (path: string, key: string) => t.http().get(path).set('X-Api-Key', key);
const post = (path: string, key: string, body: object) =>
  t.http().post(path).set('X-Api-Key', key).send(body);

beforeAll(async () => {
  t = await createTestApp(__filename, {
    TRUST_PROXY: 'true',
    AUTH_FAILURE_MAX: String(AUTH_FAILURE_MAX),
    EVENTS_POLL_MS: '100',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Every admitted request one document: what a key was charged can be counted.
    RATE_LIMIT_STORE: 'mongo',
    RATE_LIMIT_CHUNK: '1',
  });
  await t.app.listen(0, '127.0.0.1');
  port = ((t.app.getHttpServer() as Server).address() as AddressInfo).port;
  user = await createUser(t);
  for (const [collection, _id] of [
    ['orders', 'o1'],
    ['notes-a', 'n1'],
    ['secret', 's1'],
  ] as const)
    await post(`/data/${collection}`, user.apiKey, { item: { _id, kind: 'a' } }).expect(200);
  limited = (await limitedKey({ collections: { orders: 'read', 'notes*': 'write' } })).secret;
});
afterAll(async () => {
  await t?.close();
});

describe('a key limited to collections', () => {
  it('reads orders but may not write them, and writes notes-x', async () => {
    const list = await get('/data/orders', limited).expect(200);
    expect(JSON.stringify(list.body)).toContain('"o1"');
    await get('/data/orders/count', limited).expect(200);
    const write = await post('/data/orders', limited, { item: { _id: 'o2' } });
    expectProblem(write, 403, 'COLLECTION_NOT_ALLOWED');
    await post('/data/notes-x', limited, { item: { _id: 'x1', kind: 'a' } }).expect(200);
    await get('/data/notes-x/_id/x1', limited).expect(200);
  });

  it('gets the same 403 for secret, which exists, and for a collection that does not', async () => {
    const bodies: Record<string, unknown>[] = [];
    for (const name of ['secret', 'missing']) {
      for (const res of [
        await get(`/data/${name}`, limited),
        await get(`/data/${name}/count`, limited),
        await get(`/data/${name}/_id/s1`, limited),
        await get(`/data/${name}/index`, limited),
        await get(`/data/${name}/stats`, limited),
        await get(`/data/${name}/aggregate?groupBy=kind`, limited),
        await get(`/data/${name}/schema`, limited),
        await post(`/data/${name}`, limited, { item: { _id: 's2' } }),
        await t.http().delete(`/data/${name}`).set('X-Api-Key', limited),
      ]) {
        expectProblem(res, 403, 'COLLECTION_NOT_ALLOWED');
        const {
          traceId: _trace,
          instance: _instance,
          ...rest
        } = res.body as Record<string, unknown>;
        bodies.push({ ...rest, detail: String(rest.detail).replace(name, '<name>') });
      }
    }
    const half = bodies.length / 2;
    expect(bodies.slice(half)).toEqual(bodies.slice(0, half));
    // Nothing was written to secret, nor was missing made.
    const names = (await get('/data', user.apiKey).expect(200)).body as { name: string }[];
    expect(names.map((c) => c.name)).not.toContain('missing');
    const secret = await get('/data/secret', user.apiKey).expect(200);
    expect(JSON.stringify(secret.body)).not.toContain('"s2"');
  });

  it('is refused the replay of an idempotent write to secret that a full key of its user made', async () => {
    const body = { item: { _id: 'idem', kind: 'a' } };
    const send = (key: string) =>
      t
        .http()
        .post('/data/secret')
        .set('X-Api-Key', key)
        .set('Idempotency-Key', 'grant-1')
        .send(body);
    await send(user.apiKey).expect(200);
    const replayed = await send(user.apiKey).expect(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const res = await send(limited);
    expectProblem(res, 403, 'COLLECTION_NOT_ALLOWED');
    expect(JSON.stringify(res.body)).not.toContain('idem');
  });

  it('lists and counts only its collections: GET /data, GET /me, GET /me/branches and the typed document', async () => {
    const names = (await get('/data', limited).expect(200)).body as { name: string }[];
    expect(names.map((c) => c.name).sort()).toEqual(['notes-a', 'notes-x', 'orders']);
    const all = (await get('/data', user.apiKey).expect(200)).body as { name: string }[];
    expect(all.map((c) => c.name)).toContain('secret');
    // Counts of collections are of its own too: no number tells of secret.
    const me = await get('/me', limited).expect(200);
    expect(me.body.quota.collections.used).toBe(3);
    expect((await get('/me', user.apiKey).expect(200)).body.quota.collections.used).toBe(4);
    const branches = await get('/me/branches', limited).expect(200);
    expect(branches.body).toEqual([{ name: '', collections: 3 }]);
    const typed = await get('/data/openapi.json', limited).expect(200);
    expect(JSON.stringify(typed.body)).not.toContain('/data/secret');
    expect(JSON.stringify(typed.body)).toContain('/data/orders');
  });

  it('exports only the lines of its collections, and is refused secret by name', async () => {
    const whole = await exportAs(t, limited);
    expect(whole.status).toBe(200);
    expect(whole.text).not.toContain('secret');
    const collections = whole.lines
      .filter((line) => line.type === 'item')
      .map((line) => line.collection);
    expect(new Set(collections)).toEqual(new Set(['orders', 'notes-a', 'notes-x']));
    expect((await exportAs(t, user.apiKey)).text).toContain('secret');
    for (const name of ['secret', 'missing']) {
      const named = await exportAs(t, limited, { collections: `orders,${name}` });
      expect({ status: named.status, code: named.body.code }).toEqual({
        status: 403,
        code: 'COLLECTION_NOT_ALLOWED',
      });
    }
  });

  it('imports only into collections it may write, line by line', async () => {
    const imported = await importAs(t, limited, [
      { type: 'item', collection: 'notes-b', item: { _id: 'i1' } },
      { type: 'item', collection: 'orders', item: { _id: 'i2' } },
      { type: 'item', collection: 'secret', item: { _id: 'i3' } },
    ]);
    const { results } = resultsOf(imported);
    expect(results.map((line: Line) => [line.status, line.code])).toEqual([
      [201, undefined],
      [403, 'COLLECTION_NOT_ALLOWED'],
      [403, 'COLLECTION_NOT_ALLOWED'],
    ]);
    const secret = await get('/data/secret', user.apiKey).expect(200);
    expect(JSON.stringify(secret.body)).not.toContain('"i3"');
  });

  it('gets no event of secret from the feed, a long poll or a live query, while secret is written', async () => {
    const from = (await get('/data/orders', limited).expect(200)).headers['feed-position'];
    const stream = await SseClient.open(port, `/events/stream?after=${from}`, {
      'X-Api-Key': limited,
    });
    const live = await SseClient.open(
      port,
      `/events/stream?after=${from}&collection=notes-a&filter[kind]=a`,
      { 'X-Api-Key': limited },
    );
    // Sent now (a supertest request starts when it is awaited or `then`ed).
    const poll = get(`/events?after=${from}&wait=10`, limited).then((res) => res);
    try {
      expect([stream.status, live.status]).toEqual([200, 200]);
      await post('/data/secret', user.apiKey, { item: { _id: 'feed-s', kind: 'a' } }).expect(200);
      await post('/data/notes-a', user.apiKey, { item: { _id: 'feed-n', kind: 'a' } }).expect(200);
      const answered = await poll;
      expect(answered.status).toBe(200);
      const polled = (answered.body as { events: FeedEvent[] }).events;
      // Events come in order: once the notes-a item's has come, secret's has been judged.
      const streamed = (await stream.waitFor(1)).map((e) => JSON.parse(e.data) as FeedEvent);
      const lived = (await live.waitFor(1)).map((e) => JSON.parse(e.data) as FeedEvent);
      for (const seen of [polled, streamed, lived]) {
        expect(seen.map((e) => e.key)).toEqual(['feed-n']);
        expect(JSON.stringify(seen)).not.toContain('secret');
      }
      // The full key's feed has it: the events exist.
      const full = await get(`/events?after=${from}`, user.apiKey).expect(200);
      expect((full.body as { events: FeedEvent[] }).events.map((e) => e.key)).toEqual([
        'feed-s',
        'feed-n',
      ]);
    } finally {
      stream.close();
      live.close();
    }
    for (const path of ['/events?collection=secret', '/events/stream?collection=secret']) {
      expectProblem(await get(path, limited), 403, 'COLLECTION_NOT_ALLOWED');
    }
    const after0 = await get('/events?after=0&limit=100', limited).expect(200);
    expect(JSON.stringify(after0.body)).not.toContain('secret');
  });

  it('makes webhooks only for its collections, and sees only those', async () => {
    const url = 'http://127.0.0.1:9/hook';
    const full = await post('/webhooks', user.apiKey, { url, events: ['created'] }).expect(200);
    for (const body of [
      { url, events: ['created'], collection: 'secret' },
      { url, events: ['created'], collection: 'missing' },
      { url, events: ['created'] },
    ])
      expectProblem(await post('/webhooks', limited, body), 403, 'COLLECTION_NOT_ALLOWED');
    const own = await post('/webhooks', limited, {
      url,
      events: ['created'],
      collection: 'notes-x',
    }).expect(200);
    const seen = (await get('/webhooks', limited).expect(200)).body as { id: string }[];
    expect(seen.map((w) => w.id)).toEqual([own.body.webhook.id]);
    const fullId = (full.body as { webhook: { id: string } }).webhook.id;
    expectProblem(await get(`/webhooks/${fullId}/deliveries`, limited), 404, 'WEBHOOK_NOT_FOUND');
  });

  it("may neither purge a sub profile's items from every collection nor erase the account", async () => {
    const sub = await createSubKey(t, user);
    await post('/data/secret', sub.apiKey, { item: { _id: 'sub-item' } }).expect(200);
    const purge = await t
      .http()
      .delete(`/profile/${sub.accountId}?clientId=${sub.clientId}&purgeData=true`)
      .set('X-Api-Key', limited);
    expectProblem(purge, 403, 'COLLECTION_NOT_ALLOWED');
    // Nothing was done: the sub key still works and its item in secret is there.
    await get('/data/secret/_id/sub-item', sub.apiKey).expect(200);
    const erase = await t
      .http()
      .delete('/profile')
      .set('X-Api-Key', limited)
      .send({ confirm: user.subject });
    expectProblem(erase, 403, 'COLLECTION_NOT_ALLOWED');
    await get('/data/secret', user.apiKey).expect(200);
  });
});

describe('a key limited to addresses', () => {
  const from = (ip: string, key: string) =>
    t.http().get('/data').set('X-Forwarded-For', ip).set('X-Api-Key', key);

  it('is refused 403 IP_NOT_ALLOWED elsewhere, not counted as a failed authentication nor charged to the rate limit, and works from its addresses', async () => {
    const { secret, id } = await limitedKey({ allowedIps: ['198.51.100.0/24', '2001:db8::/32'] });
    const hitsOf = () =>
      t.connection
        .collection('rate_limit_hits')
        .countDocuments({ _id: { $regex: `\\|key:${id}\\|` } } as never);
    for (let i = 0; i < AUTH_FAILURE_MAX + 2; i += 1) {
      const res = await from('203.0.113.5', secret);
      expectProblem(res, 403, 'IP_NOT_ALLOWED');
      expect(res.body.detail).toContain('203.0.113.5');
    }
    expectProblem(await from('2001:db9::1', secret), 403, 'IP_NOT_ALLOWED');
    expect(await t.connection.collection('auth_failures').countDocuments()).toBe(0);
    expect(await hitsOf()).toBe(0);
    // A wrong key from that address is its first failure, not over the budget.
    const wrong = await from('203.0.113.5', `${secret.slice(0, -2)}xx`);
    expectProblem(wrong, 401, 'UNAUTHENTICATED');

    await from('198.51.100.7', secret).expect(200);
    await from('2001:db8:5::1', secret).expect(200);
    expect(await hitsOf()).toBe(2);
    // An unlimited key of the same user works from anywhere.
    await from('203.0.113.5', user.apiKey).expect(200);
  });
});
