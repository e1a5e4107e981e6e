import { Agent } from 'node:http';
import type { Document } from 'mongodb';
import { PLACE_GRACE_MS } from '../../src/data/items/limits/item-places';
import {
  companionCollection,
  createTestApp,
  nativeCollection,
  testDatabaseUri,
  type TestApp,
} from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { holdClock, moveClock } from '../support/held-clock';
import { as } from '../support/http';
import { importAs, resultsOf } from '../support/ndjson';
import { send, startService, type Reply, type ServiceProcess } from '../support/service-process';
import { until } from '../support/until';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';

/**
 * MAX_ITEMS_PER_COLLECTION with real instances (`node dist/main.js`) on one database: concurrent
 * creates through two of them end with exactly the limit stored, refusals leave nothing behind,
 * deletes free room, import lines are refused by name, a lowered limit refuses creates but not
 * reads or deletes, items stored without a limit are counted once one applies, and a create killed
 * between its place and its item leaves the count exact once the place is taken back.
 */
const MAX = 5;
const LIMITED = { LOG_LEVEL: 'warn', MAX_ITEMS_PER_COLLECTION: String(MAX) };
let t: TestApp;
let a: ServiceProcess;
let b: ServiceProcess;
const started: ServiceProcess[] = [];
let proxy: WireProxy | undefined;

beforeAll(async () => {
  t = await createTestApp(__filename, { MAX_ITEMS_PER_COLLECTION: String(MAX) });
  const env = { ...LIMITED, MONGODB_DB_NAME: t.config.database.dbName };
  [a, b] = await Promise.all([startService(env), startService(env)]);
}, 180_000);

afterAll(async () => {
  jest.useRealTimers();
  await Promise.all([a?.kill(), b?.kill(), ...started.map((s) => s.kill())]);
  await proxy?.close();
  await t?.close();
});

/** Another instance on the same database, with `env` over the defaults; killed after the file. */
async function another(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await startService({
    LOG_LEVEL: 'warn',
    MONGODB_DB_NAME: t.config.database.dbName,
    ...env,
  });
  started.push(service);
  return service;
}

function keyOf(user: TestUser): Record<string, string> {
  return { 'X-Api-Key': user.apiKey };
}

function json<T = Record<string, unknown>>(reply: Reply): T {
  return JSON.parse(reply.body) as T;
}

async function registryEntry(collection: string, user: TestUser): Promise<Document | null> {
  return t.connection
    .collection('data_collections')
    .findOne({ name: collection, tenant: user.subject });
}

/** The ids stored in the collection, sorted, read from the database itself. */
async function storedIds(user: TestUser, collection: string): Promise<string[]> {
  const entry = await registryEntry(collection, user);
  if (!entry) return [];
  const docs = await nativeCollection(t, entry)
    .find({}, { projection: { _id: 1 } })
    .toArray();
  return docs.map((doc) => doc._id).sort();
}

/** The collection's places: slot → item id. */
async function places(user: TestUser, collection: string): Promise<Map<number, string>> {
  const entry = await registryEntry(collection, user);
  const docs = await companionCollection(t, entry, 'data_item_places')
    .find({ physical: entry?.physical })
    .toArray();
  return new Map(docs.map((doc) => [doc.slot as number, doc.itemId as string]));
}

/** The item ids of the collection's `created` item events in the user's feed. */
async function createdEvents(user: TestUser, collection: string): Promise<string[]> {
  const res = await as(t, user)
    .get('/events', { query: { limit: '500' } })
    .expect(200);
  const events = (res.body.events ?? res.body) as {
    type: string;
    resource: string;
    collection?: string;
    key: string;
  }[];
  return events
    .filter((e) => e.resource === 'item' && e.type === 'created' && e.collection === collection)
    .map((e) => e.key)
    .sort();
}

function expectRefusal(body: Record<string, unknown>, max = MAX): void {
  expect(body).toMatchObject({
    code: 'ITEM_QUOTA_EXCEEDED',
    limit: 'itemsPerCollection',
    max,
    plan: null,
  });
  expect(body.usage).toBeGreaterThanOrEqual(max);
}

it('stores exactly the limit of concurrent POSTs through two instances, refusing the others with 409', async () => {
  const user = await createUser(t);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const replies = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      send(agent, (i % 2 === 0 ? a : b).port, 'POST', '/data/notes', keyOf(user), {
        item: { _id: `n${i}`, i },
      }),
    ),
  );
  agent.destroy();
  const created = replies.filter((r) => r.status === 200).map((r) => json<{ _id: string }>(r)._id);
  const refused = replies.filter((r) => r.status === 409);
  expect(created).toHaveLength(MAX);
  expect(refused).toHaveLength(16 - MAX);
  for (const reply of refused) {
    expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
    expectRefusal(json(reply));
  }
  // Exactly the answered items are stored, each holding one place below the limit, and only
  // they have events: a refused create left nothing.
  expect(await storedIds(user, 'notes')).toEqual([...created].sort());
  const held = await places(user, 'notes');
  expect([...held.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
  expect([...held.values()].sort()).toEqual([...created].sort());
  await until(
    'the created items have their events',
    async () => (await createdEvents(user, 'notes')).length >= MAX,
  );
  expect(await createdEvents(user, 'notes')).toEqual([...created].sort());
  const count = await a.send('GET', '/data/notes/count', keyOf(user));
  expect(json(count)).toEqual({ count: MAX });
});

it('gives each item of concurrent bulk creates through two instances a result, storing exactly the limit', async () => {
  const user = await createUser(t);
  const bulk = (service: ServiceProcess, prefix: string) =>
    service.send('POST', '/data/batch/bulk', keyOf(user), {
      items: Array.from({ length: 4 }, (_, i) => ({ _id: `${prefix}${i}` })),
    });
  const [fromA, fromB] = await Promise.all([bulk(a, 'a'), bulk(b, 'b')]);
  type Result = { index: number; status: number; _id?: string; error?: Record<string, unknown> };
  const results = [fromA, fromB].flatMap((reply) => {
    expect(reply.status).toBe(200);
    return json<{ results: Result[] }>(reply).results;
  });
  const created = results.filter((r) => r.status === 200).map((r) => r._id as string);
  expect(created).toHaveLength(MAX);
  const refused = results.filter((r) => r.status !== 200);
  expect(refused).toHaveLength(8 - MAX);
  for (const result of refused) {
    expect(result.status).toBe(409);
    expectRefusal(result.error ?? {});
  }
  expect(await storedIds(user, 'batch')).toEqual([...created].sort());
  expect((await places(user, 'batch')).size).toBe(MAX);
});

it('answers find-or-create of a held value on a full collection, and refuses its create branch', async () => {
  const user = await createUser(t);
  for (let i = 0; i < MAX; i += 1)
    await as(t, user)
      .post('/data/codes', { item: { code: `c${i}` }, uniqueField: 'code' })
      .expect(200);
  const found = await as(t, user)
    .post('/data/codes', { item: { code: 'c1' }, uniqueField: 'code', onConflict: 'return' })
    .expect(200);
  expect(found.body.code).toBe('c1');
  const refused = await as(t, user)
    .post('/data/codes', { item: { code: 'new' }, uniqueField: 'code', onConflict: 'return' })
    .expect(409);
  expectRefusal(refused.body);
  // The refused create's value is free again: nothing of it stays behind.
  await as(t, user).delete('/data/codes/code/c0').expect(204);
  await as(t, user)
    .post('/data/codes', { item: { code: 'new' }, uniqueField: 'code', onConflict: 'return' })
    .expect(200);
  expect(await storedIds(user, 'codes')).toHaveLength(MAX);
});

it('frees room at once for deletes by id and by filter, on any instance', async () => {
  const user = await createUser(t);
  for (let i = 0; i < MAX; i += 1)
    expect(
      (await a.send('POST', '/data/room', keyOf(user), { item: { _id: `r${i}`, n: i } })).status,
    ).toBe(200);
  expect((await b.send('POST', '/data/room', keyOf(user), { item: { _id: 'x' } })).status).toBe(
    409,
  );
  expect((await b.send('DELETE', '/data/room/_id/r0', keyOf(user))).status).toBe(204);
  expect((await a.send('POST', '/data/room', keyOf(user), { item: { _id: 'x' } })).status).toBe(
    200,
  );
  const many = await as(t, user)
    .delete('/data/room', { filter: { n: { gte: 3 } }, multi: true })
    .expect(200);
  expect(many.body).toEqual({ deleted: 2 });
  const again = await Promise.all([
    a.send('POST', '/data/room', keyOf(user), { item: { _id: 'y' } }),
    b.send('POST', '/data/room', keyOf(user), { item: { _id: 'z' } }),
    a.send('POST', '/data/room', keyOf(user), { item: { _id: 'w' } }),
  ]);
  expect(again.map((r) => r.status).sort()).toEqual([200, 200, 409]);
  expect(await storedIds(user, 'room')).toHaveLength(MAX);
  expect((await places(user, 'room')).size).toBe(MAX);
});

it('refuses the import lines past the limit by name and goes on with the next line', async () => {
  const user = await createUser(t);
  const line = (id: string) => ({ type: 'item', collection: 'imported', item: { _id: id } });
  const ids = ['i0', 'i1', 'i2', 'i3', 'i4', 'i5', 'i6'];
  const imported = resultsOf(await importAs(t, user, ids.map(line)));
  expect(imported.results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 409, 409]);
  for (const result of imported.results.slice(MAX)) expectRefusal(result);
  expect(await storedIds(user, 'imported')).toEqual(ids.slice(0, MAX));
  // In upsert mode a stored item is replaced (no new place); a new one is still refused, and
  // the line after it is written.
  await as(t, user).delete('/data/imported/_id/i4').expect(204);
  const upsert = resultsOf(
    await importAs(t, user, [line('i0'), line('new1'), line('new2'), line('i1')], {
      mode: 'upsert',
    }),
  );
  expect(upsert.results.map((r) => r.status)).toEqual([200, 201, 409, 200]);
  expect(await storedIds(user, 'imported')).toEqual(['i0', 'i1', 'i2', 'i3', 'new1']);
});

it('refuses creates past a lowered limit but keeps every item readable and deletable', async () => {
  const user = await createUser(t);
  for (let i = 0; i < MAX; i += 1)
    expect(
      (await a.send('POST', '/data/lowered', keyOf(user), { item: { _id: `l${i}` } })).status,
    ).toBe(200);
  const lower = await another({ MAX_ITEMS_PER_COLLECTION: '3' });
  const refused = await lower.send('POST', '/data/lowered', keyOf(user), { item: { _id: 'new' } });
  expect(refused.status).toBe(409);
  expect(json(refused)).toMatchObject({ code: 'ITEM_QUOTA_EXCEEDED', max: 3, usage: MAX });
  // Reads and deletes go on over the limit.
  const listed = await lower.send('GET', '/data/lowered', keyOf(user));
  expect(
    json<{ _id: string }[]>(listed)
      .map((item) => item._id)
      .sort(),
  ).toEqual(['l0', 'l1', 'l2', 'l3', 'l4']);
  expect((await lower.send('DELETE', '/data/lowered/_id/l0', keyOf(user))).status).toBe(204);
  // Slot 0 is free, but four items are stored: still refused.
  const still = await lower.send('POST', '/data/lowered', keyOf(user), { item: { _id: 'new' } });
  expect(json(still)).toMatchObject({ code: 'ITEM_QUOTA_EXCEEDED', max: 3, usage: 4 });
  expect((await lower.send('DELETE', '/data/lowered/_id/l1', keyOf(user))).status).toBe(204);
  expect((await lower.send('DELETE', '/data/lowered/_id/l2', keyOf(user))).status).toBe(204);
  // Two items: of concurrent creates exactly one fits under 3.
  const racing = await Promise.all(
    ['p', 'q', 'r', 's'].map((id) =>
      lower.send('POST', '/data/lowered', keyOf(user), { item: { _id: id } }),
    ),
  );
  expect(racing.filter((r) => r.status === 200)).toHaveLength(1);
  expect(await storedIds(user, 'lowered')).toHaveLength(3);
});

it('counts the items stored while no limit applied once one does', async () => {
  const user = await createUser(t);
  const unlimited = await another({});
  for (let i = 0; i < MAX + 2; i += 1)
    expect(
      (await unlimited.send('POST', '/data/legacy', keyOf(user), { item: { _id: `g${i}` } }))
        .status,
    ).toBe(200);
  const refused = await a.send('POST', '/data/legacy', keyOf(user), { item: { _id: 'new' } });
  expect(refused.status).toBe(409);
  expect(json(refused)).toMatchObject({ code: 'ITEM_QUOTA_EXCEEDED', max: MAX, usage: MAX + 2 });
  // Every stored item holds a place now, beyond the limit.
  expect([...(await places(user, 'legacy')).values()].sort()).toEqual(
    await storedIds(user, 'legacy'),
  );
  for (const id of ['g0', 'g1', 'g2'])
    expect((await b.send('DELETE', `/data/legacy/_id/${id}`, keyOf(user))).status).toBe(204);
  expect((await b.send('POST', '/data/legacy', keyOf(user), { item: { _id: 'new' } })).status).toBe(
    200,
  );
  expect(
    (await a.send('POST', '/data/legacy', keyOf(user), { item: { _id: 'newer' } })).status,
  ).toBe(409);
  expect(await storedIds(user, 'legacy')).toHaveLength(MAX);
});

it('takes back the place of a create killed before its insert, once its grace is over', async () => {
  const user = await createUser(t);
  for (let i = 0; i < MAX - 1; i += 1)
    await as(t, user)
      .post('/data/crash', { item: { _id: `k${i}` } })
      .expect(200);
  proxy = await startWireProxy(testDatabaseUri());
  const doomed = await another({
    ...LIMITED,
    MONGODB_URI: proxy.uri,
    // The driver's socket timeout must not end the held insert before the SIGKILL.
    QUERY_TIMEOUT_MS: '120000',
  });
  const entry = await registryEntry('crash', user);
  const physical = entry?.physical as string;
  proxy.hold((command) => command.insert === physical);
  const inFlight = doomed
    .send('POST', '/data/crash', keyOf(user), { item: { _id: 'lost' } })
    .catch(() => undefined);
  await until(
    'the create holds its place and its insert is held',
    async () =>
      proxy !== undefined && proxy.held() > 0 && (await places(user, 'crash')).size === MAX,
  );
  await doomed.kill();
  await inFlight;
  // The place of the lost item fills the collection while the create could still be under way.
  const early = await as(t, user)
    .post('/data/crash', { item: { _id: 'early' } })
    .expect(409);
  expectRefusal(early.body);
  expect(await storedIds(user, 'crash')).toEqual(['k0', 'k1', 'k2', 'k3']);
  // Past the grace the place is taken back: the next create gets it, and the limit holds.
  holdClock();
  moveClock(PLACE_GRACE_MS + 1_000);
  await as(t, user)
    .post('/data/crash', { item: { _id: 'after' } })
    .expect(200);
  await as(t, user)
    .post('/data/crash', { item: { _id: 'over' } })
    .expect(409);
  jest.useRealTimers();
  expect(await storedIds(user, 'crash')).toEqual(['after', 'k0', 'k1', 'k2', 'k3']);
  expect([...(await places(user, 'crash')).values()].sort()).toEqual([
    'after',
    'k0',
    'k1',
    'k2',
    'k3',
  ]);
});
