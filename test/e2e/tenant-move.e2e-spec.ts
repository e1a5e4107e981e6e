import { MongoClient, type Db, type Document } from 'mongodb';
import { getModelToken } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { CollectionRegistryRepository } from '../../src/data/collections/collection-registry.repository';
import { CollectionRegistryDocument } from '../../src/data/collections/collection-registry.schema';
import { CollectionWriteGate } from '../../src/data/collections/collection-write.gate';
import { CollectionMovingError } from '../../src/data/data.errors';
import { TenantPlacements, tenantDatabaseName } from '../../src/placement';
import { TenantPlacementsRepository } from '../../src/placement/tenant-placements.repository';
import { WORDS_FIELD } from '../../src/data/query/data.constants';
import { WORDS_INDEX } from '../../src/data/search/search-rule';
import { itemWords } from '../../src/data/search/tokenizer';
import {
  createTestApp,
  nativeCollection,
  testDatabaseUri,
  TEST_ADMIN_KEY,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';
import { asOperator } from '../support/http';
import { collectPages, ids } from '../support/paging';
import { expectProblem } from '../support/problems';
import { until } from '../support/until';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';

/**
 * Moving a tenant between two database processes as two clusters, served by two instances: what
 * the tenant sees afterwards (items, ETags, indexes, uniqueField, its quota), what is left on the
 * source (nothing), the operator's view, and the moves that are refused.
 */
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
const ENV = {
  REGISTRY_CACHE_MS: '200',
  COLLECTION_DROP_GRACE_MS: '1000',
  LIFECYCLE_POLL_MS: '200',
  MOVE_LEASE_MS: '3000',
  MOVE_MAX_WRITE_PAUSE_MS: '1000',
  ERASURE_LEASE_MS: '1000',
  EVENTS_POLL_MS: '100',
  // Two batches for the six items of the build moved along.
  SEARCH_BUILD_BATCH: '3',
  // The webhook below points at a closed local port: its deliveries stay pending, retried.
  WEBHOOK_ALLOW_PRIVATE: 'true',
};

let clusterB: OwnDatabase;
/** Instance one's main database (the registry among it) through a proxy that can hold a read. */
let proxy: WireProxy;
let one: TestApp;
let two: TestApp;
const dbName = uniqueDbName(__filename);

beforeAll(async () => {
  clusterB = await startOwnDatabase('move-b');
  const clusters = {
    a: { uri: testDatabaseUri(), region: 'eu' },
    b: { uri: clusterB.uri, region: 'us' },
    closed: { uri: clusterB.uri, region: 'ap', open: false },
  };
  const env = { ...ENV, MONGODB_DB_NAME: dbName, DATA_CLUSTERS: JSON.stringify(clusters) };
  proxy = await startWireProxy(testDatabaseUri());
  one = await createTestApp(__filename, { ...env, MONGODB_URI: proxy.uri });
  two = await createTestApp(__filename, env);
});

afterAll(async () => {
  proxy?.release();
  await two?.app.close();
  await one?.close();
  await proxy?.close();
  await clusterB?.stop();
});

interface MoveBody {
  id: string;
  status: string;
  cluster: string;
  from: string | null;
  collections: number;
  collectionsCopied: number;
  itemsCopied: number;
  runs: number;
  finishedAt: string | null;
}

/** A promise the test resolves when it lets a held step go on. */
function opening(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

async function finished(t: TestApp, id: string): Promise<MoveBody> {
  let move: MoveBody | undefined;
  await until(
    `move ${id} ends`,
    async () => {
      move = (await t.http().get(`/admin/moves/${id}`).set(admin).expect(200)).body as MoveBody;
      return move.status !== 'running';
    },
    30_000,
  );
  return move as MoveBody;
}

async function seed(t: TestApp, user: TestUser): Promise<Record<string, unknown[]>> {
  const key = { 'X-Api-Key': user.apiKey };
  for (let i = 0; i < 30; i += 1) {
    await t
      .http()
      .post('/data/orders')
      .set(key)
      .send({ item: { n: i, code: `c${i}` }, uniqueField: 'code' })
      .expect(200);
  }
  await t
    .http()
    .post('/data/orders/index')
    .set(key)
    .send({ name: 'by_n', fields: { n: -1 } })
    .expect(200);
  for (let i = 0; i < 5; i += 1) {
    await t
      .http()
      .post('/data/notes')
      .set({ ...key, 'X-Branch': 'staging' })
      .send({ item: { i } })
      .expect(200);
  }
  return snapshot(t, user);
}

/** Everything the tenant reads: items with their ETags, and indexes. */
async function snapshot(t: TestApp, user: TestUser): Promise<Record<string, unknown[]>> {
  const key = { 'X-Api-Key': user.apiKey };
  const orders = await t.http().get('/data/orders').query({ limit: 100 }).set(key).expect(200);
  const notes = await t
    .http()
    .get('/data/notes')
    .set({ ...key, 'X-Branch': 'staging' })
    .expect(200);
  const first = (orders.body as { _id: string }[])[0] as { _id: string };
  const etag = await t.http().get(`/data/orders/_id/${first._id}`).set(key).expect(200);
  const indexes = await t.http().get('/data/orders/index').set(key).expect(200);
  return {
    orders: orders.body as unknown[],
    notes: notes.body as unknown[],
    etag: [etag.headers.etag],
    indexes: indexes.body as unknown[],
  };
}

async function placementOf(t: TestApp, subject: string) {
  return (await t.http().get(`/admin/tenants/user/${subject}/placement`).set(admin).expect(200))
    .body as { cluster: string; database: string };
}

describe('moving a tenant', () => {
  it('moves every collection of every branch; the tenant reads the same, nothing is left behind', async () => {
    const user = await createUser(one, { region: 'eu' });
    const key = { 'X-Api-Key': user.apiKey };
    const hook = await one
      .http()
      .post('/webhooks')
      .set(key)
      .send({ url: 'http://127.0.0.1:9/hook', events: ['created'] })
      .expect(200);
    const webhookId = (hook.body as { webhook: { id: string } }).webhook.id;
    const keyed = () =>
      one
        .http()
        .post('/data/keyed')
        .set({ ...key, 'Idempotency-Key': 'move-k1' })
        .send({ item: { once: true } })
        .expect(200);
    const first = await keyed();
    const before = await seed(one, user);
    expect((await placementOf(one, user.subject)).cluster).toBe('a');
    // A delivery per created item and collection (default branch), attempted and pending.
    const deliveries = async (t: TestApp) =>
      (await t.http().get(`/webhooks/${webhookId}/deliveries`).query({ limit: 100 }).set(key))
        .body as { id: string }[];
    await until('the deliveries are stored', async () => (await deliveries(one)).length === 33);

    const started = await two
      .http()
      .post(`/admin/tenants/user/${user.subject}/move`)
      .set(admin)
      .send({ cluster: 'b' })
      .expect(202);
    const body = started.body as MoveBody;
    expect(started.headers.location).toBe(`/admin/moves/${body.id}`);
    expect(body).toMatchObject({ status: 'running', cluster: 'b', from: 'a', runs: 1 });

    const move = await finished(one, body.id);
    expect(move).toMatchObject({ status: 'done', collections: 3, collectionsCopied: 3 });
    expect(move.itemsCopied).toBeGreaterThanOrEqual(35);
    expect(move.finishedAt).not.toBeNull();

    // The tenant reads exactly what it read before, ETags included, through either instance.
    expect(await snapshot(one, user)).toEqual(before);
    expect(await snapshot(two, user)).toEqual(before);
    expect(await placementOf(two, user.subject)).toEqual({
      cluster: 'b',
      database: tenantDatabaseName(dbName, { kind: 'user', id: user.subject }),
    });

    // Its stored idempotent response moved along: a repeat is answered from it, nothing runs.
    const repeat = await keyed();
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.body).toEqual(first.body);

    // The webhook's deliveries moved along (the new item's comes on top).
    const moved = (await deliveries(two)).map((d) => d.id);
    expect(moved).toHaveLength(33);

    // uniqueField holds on the target: a taken value is refused, a new one is taken.
    expectProblem(
      await two
        .http()
        .post('/data/orders')
        .set(key)
        .send({ item: { code: 'c7' }, uniqueField: 'code' }),
      409,
      'DUPLICATE_ITEM',
    );
    await one
      .http()
      .post('/data/orders')
      .set(key)
      .send({ item: { code: 'c-new' }, uniqueField: 'code' })
      .expect(200);

    // The data is on b, in the tenant's database there; a has nothing of it.
    const database = tenantDatabaseName(dbName, { kind: 'user', id: user.subject });
    const [onA, onB] = await Promise.all([
      MongoClient.connect(testDatabaseUri()),
      MongoClient.connect(clusterB.uri),
    ]);
    try {
      const listed = await onA.db().admin().listDatabases({ nameOnly: true });
      expect(listed.databases.map((d) => d.name)).not.toContain(database);
      const target = onB.db(database);
      const names = (await target.listCollections().toArray()).map((c) => c.name).sort();
      expect(names.filter((n) => n.startsWith('d_'))).toHaveLength(3);
      const entry = await one.connection
        .collection('data_collections')
        .findOne({ tenant: user.subject, name: 'orders' });
      expect(entry).toMatchObject({ cluster: 'b', database });
      expect(entry?.moving).toBeUndefined();
      expect(await target.collection(entry?.physical as string).countDocuments()).toBe(31);
      expect(
        await target.collection('data_unique_claims').countDocuments({ physical: entry?.physical }),
      ).toBe(31);
    } finally {
      await Promise.all([onA.close(), onB.close()]);
    }

    // The feed moved along: every event once, numbered without a gap, the new one included; its
    // events and intents are in the feed database of b, none are left in the main one.
    const feed = await one
      .http()
      .get('/events')
      .query({ after: 0, limit: 500 })
      .set(key)
      .expect(200);
    const seqs = (feed.body as { events: { id: string }[] }).events.map((e) => Number(e.id));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    // The keyed collection and its item, 30 orders and their collection, the new order (the 5
    // notes are in another branch).
    expect(seqs).toHaveLength(34);
    const onBAgain = await MongoClient.connect(clusterB.uri);
    try {
      const ofTenant = { tenantKind: 'user', tenant: user.subject };
      expect(await onBAgain.db(dbName).collection('events').countDocuments(ofTenant)).toBe(40);
      expect(await one.connection.collection('events').countDocuments(ofTenant)).toBe(0);
      expect(await one.connection.collection('event_intents').countDocuments(ofTenant)).toBe(0);
      expect(
        await onBAgain.db(dbName).collection('webhook_deliveries').countDocuments(ofTenant),
      ).toBeGreaterThanOrEqual(33);
      expect(await one.connection.collection('webhook_deliveries').countDocuments(ofTenant)).toBe(
        0,
      );
      const records = (db: Db) => db.collection('idempotency_records').countDocuments(ofTenant);
      expect(await records(onBAgain.db(dbName))).toBe(1);
      expect(await records(one.connection.db as unknown as Db)).toBe(0);
    } finally {
      await onBAgain.close();
    }

    // The collection quota counts the same collections.
    const me = await one.http().get('/me').set(key).expect(200);
    expect(me.body).toMatchObject({ quota: { collections: { used: 2 } } });

    const listed = await one.http().get('/admin/moves').set(admin).expect(200);
    expect((listed.body as MoveBody[]).map((m) => m.id)).toContain(body.id);
  });

  it('reads a collection and a feed being moved once afresh per write besides the write itself, and leaves no marker', async () => {
    const user = await createUser(one, { region: 'eu' });
    const key = { 'X-Api-Key': user.apiKey };
    const write = (n: number) =>
      one.http().post('/data/gated').set(key).send({ item: { n } }).expect(200);
    await write(0);
    const tenant = { kind: 'user' as const, id: user.subject };
    const registry = one.app.get(CollectionRegistryRepository);
    // Outside a move a write looks its entry up once, in the cache the gate decides on (twice
    // when the gate looked before the write's own lookup).
    const cachedLookups = jest.spyOn(registry, 'cached');
    const lookups = jest.spyOn(registry, 'find');
    try {
      await write(0.5);
      expect(cachedLookups.mock.calls.length + lookups.mock.calls.length).toBe(1);
    } finally {
      cachedLookups.mockRestore();
      lookups.mockRestore();
    }
    // What a move's announcement does to them, without a move that would pause or switch them.
    const placements = one.app.get(TenantPlacements);
    const moving = { move: 'by-hand', to: 'b', phase: 'copying' as const };
    expect(
      await registry.announceMove(tenant, moving.move, {
        cluster: 'b',
        database: placements.databaseOf(tenant),
      }),
    ).toBe(1);
    await placements.setFeedMoving(tenant, moving);
    // The caches' clock (performance.now) stands still from here: what write 1 caches is still
    // cached for write 2 however long each takes, so the reads counted are the ones a write
    // makes with its cache warm, not those of an entry that expired on a slow machine.
    const clock = jest.spyOn(performance, 'now').mockReturnValue(performance.now());
    try {
      await write(1);
      const entries = jest.spyOn(
        one.app.get<Model<unknown>>(getModelToken(CollectionRegistryDocument.name)),
        'findOne',
      );
      const feeds = jest.spyOn(one.app.get(TenantPlacementsRepository), 'find');
      try {
        await write(2);
        // Only this tenant's reads count: the instance's background work reads other tenants'
        // (the webhook fan-out, every EVENTS_POLL_MS, looks up whether its owner is moving).
        const ofCollection = entries.mock.calls.filter(
          ([filter]) => (filter as { name?: string } | undefined)?.name === 'gated',
        );
        const ofFeed = feeds.mock.calls.filter(
          ([database]) => database === placements.databaseOf(tenant),
        );
        // The collection: the gate's look after its marker, which the write goes on with (2 when
        // the write looked it up again itself, 3 when the gate's first look read it afresh too).
        expect(ofCollection.length).toBe(1);
        // The feed: the gate's look after its marker, and where the intent and the events go.
        expect(ofFeed.length).toBeLessThanOrEqual(3);
      } finally {
        entries.mockRestore();
        feeds.mockRestore();
        clock.mockRestore();
      }
      // Its markers go when the write is done, which may be just after its answer was sent.
      await until(
        'the writes leave no marker',
        async () => (await one.connection.collection('move_writes').countDocuments()) === 0,
      );
    } finally {
      const [entry] = await registry.movedBy(moving.move);
      if (entry) await registry.endMove(entry.id, moving.move);
      await placements.setFeedMoving(tenant, null);
    }
  });

  it('answers a write to a paused collection as it would after the pause when that answer needs no write: a bad body 400, a stored Idempotency-Key its replay; a valid write 503', async () => {
    const user = await createUser(one, { region: 'eu' });
    const key = { 'X-Api-Key': user.apiKey };
    const replayed = { ...key, 'Idempotency-Key': 'paused-k1' };
    const first = await one
      .http()
      .post('/data/paused')
      .set(replayed)
      .send({ item: { n: 1 } })
      .expect(200);
    // The collection's writes paused by hand, as a move pauses them before its last compare.
    const tenant = { kind: 'user' as const, id: user.subject };
    const registry = one.app.get(CollectionRegistryRepository);
    const placements = one.app.get(TenantPlacements);
    const move = 'paused-by-hand';
    await registry.announceMove(tenant, move, {
      cluster: 'b',
      database: placements.databaseOf(tenant),
    });
    const [entry] = await registry.movedBy(move);
    try {
      expect(await registry.setMovePhase((entry as { id: string }).id, move, 'paused')).toBe(true);
      // A body the validation pipe refuses: its 400, which it gets after the pause too.
      expectProblem(
        await one.http().post('/data/paused').set(key).send({ item: 'not an object' }),
        400,
        'VALIDATION_FAILED',
      );
      // A repeated Idempotency-Key: the stored answer, replayed without a write.
      const again = await one
        .http()
        .post('/data/paused')
        .set(replayed)
        .send({ item: { n: 1 } })
        .expect(200);
      expect(again.body).toEqual(first.body);
      // A write that would write: refused until the pause ends, leaving no marker.
      const refused = await one
        .http()
        .post('/data/paused')
        .set(key)
        .send({ item: { n: 2 } });
      expectProblem(refused, 503, 'COLLECTION_MOVING');
      expect(refused.headers['retry-after']).toBe('1');
      expect(await one.connection.collection('move_writes').countDocuments()).toBe(0);
    } finally {
      if (entry) await registry.endMove(entry.id, move);
    }
    await one
      .http()
      .post('/data/paused')
      .set(key)
      .send({ item: { n: 2 } })
      .expect(200);
  });

  it('moves a collection with search whole: every item keeps its exact words, and the word index comes along', async () => {
    const user = await createUser(one, { region: 'eu' });
    const key = { 'X-Api-Key': user.apiKey };
    const write = (item: Record<string, unknown>) =>
      one.http().post('/data/searched').set(key).send({ item }).expect(200);
    await write({ _id: 's0', title: 'first' });
    const tenant = { kind: 'user' as const, id: user.subject };
    const registry = one.app.get(CollectionRegistryRepository);
    const entry = await registry.find(tenant, '', 'searched', { fresh: true });
    if (!entry) throw new Error('no registry entry');
    const rule = { fields: ['title'], minTokenLength: 2 };
    // The configuration and its index as PUT /data/{c}/search makes them.
    await nativeCollection(one, entry as unknown as Record<string, unknown>).createIndex(
      { [WORDS_FIELD]: 1 },
      { name: WORDS_INDEX },
    );
    await registry.changeRules(entry, {
      search: { ...rule, version: 1, state: 'ready', changedAt: new Date() },
    });
    await write({ _id: 's1', title: 'Crème Brûlée, twice' });
    await write({ _id: 's2', title: ['東京', 'Tokyo'] });
    const started = await two
      .http()
      .post(`/admin/tenants/user/${user.subject}/move`)
      .set(admin)
      .send({ cluster: 'b' })
      .expect(202);
    expect(await finished(one, (started.body as MoveBody).id)).toMatchObject({ status: 'done' });
    const moved = await one.connection
      .collection('data_collections')
      .findOne({ tenant: user.subject, name: 'searched' });
    expect(moved).toMatchObject({ cluster: 'b' });
    // A write after the move stores its words on the destination too.
    await write({ _id: 's3', title: 'after the move' });
    const items = nativeCollection(one, moved);
    const docs = await items.find().sort({ _id: 1 }).toArray();
    expect(docs.map((doc) => [doc._id, doc[WORDS_FIELD]])).toEqual([
      // Written before the configuration, and not rebuilt here: none, as at the source.
      ['s0', undefined],
      ['s1', ['brulee', 'creme', 'twice']],
      ['s2', ['tokyo', '京', '東']],
      ['s3', ['after', 'move', 'the']],
    ]);
    for (const doc of docs.slice(1)) expect(doc[WORDS_FIELD]).toEqual(itemWords(doc, rule));
    const indexes = await items.listIndexes().toArray();
    expect(indexes.find((index) => index.name === WORDS_INDEX)?.key).toEqual({
      [WORDS_FIELD]: 1,
    });
  });

  it('builds the words of a collection while it is moved: a batch during the copy is copied again, one during the pause waits and writes the destination; every item has its exact words there, and q answers', async () => {
    const user = await createUser(one, { region: 'eu' });
    const key = { 'X-Api-Key': user.apiKey };
    const titles = ['Red shoes', 'Crème brûlée', 'red wine', '東京 Tokyo', 'Blue SHOES', 'notes'];
    for (const [i, title] of titles.entries()) {
      await one
        .http()
        .post('/data/built')
        .set(key)
        .send({ item: { _id: `b${i}`, title } })
        .expect(200);
    }
    const tenant = { kind: 'user' as const, id: user.subject };
    const entry = await one.app
      .get(CollectionRegistryRepository)
      .find(tenant, '', 'built', { fresh: true });
    if (!entry) throw new Error('no registry entry');
    const source = nativeCollection(one, entry as unknown as Record<string, unknown>);
    // The move's pause waits for the test twice: before it is set (the first comparison and the
    // catch-up are done) and once it is set (before the move waits for writes under way).
    const gates = { beforePause: opening(), inPause: opening() };
    let pauseAsked = false;
    let pauseSet = false;
    const spies: { mockRestore(): void }[] = [one, two].map((t) => {
      const registry = t.app.get(CollectionRegistryRepository);
      const setMovePhase = registry.setMovePhase.bind(registry);
      return jest.spyOn(registry, 'setMovePhase').mockImplementation(async (id, move, phase) => {
        if (id !== entry.id || phase !== 'paused') return setMovePhase(id, move, phase);
        pauseAsked = true;
        await gates.beforePause.promise;
        const set = await setMovePhase(id, move, phase);
        pauseSet = true;
        await gates.inPause.promise;
        return set;
      });
    });
    // The build's batches that the collection's move gate refused (503 COLLECTION_MOVING).
    const gate = one.app.get(CollectionWriteGate);
    const gateWrite = gate.write.bind(gate);
    let refused = 0;
    spies.push(
      jest
        .spyOn(gate, 'write')
        .mockImplementation(async (...args: Parameters<typeof gateWrite>) => {
          try {
            return await gateWrite(...args);
          } catch (error) {
            if (args[2] === 'built' && error instanceof CollectionMovingError) refused += 1;
            throw error;
          }
        }),
    );
    const release = () => {
      gates.beforePause.resolve();
      gates.inPause.resolve();
      proxy.release();
    };
    try {
      const rule = { fields: ['title'], minTokenLength: 2 };
      const put = await one.http().put('/data/built/search').set(key).send(rule);
      expect(put.status).toBe(202);
      // The build's first look at the collection's entry (before its first batch) is held.
      proxy.hold(
        (command) =>
          command.find === 'data_collections' &&
          (command.filter as { name?: unknown } | undefined)?.name === 'built',
      );
      await until('the build is held before its first batch', () => proxy.held() > 0, 15_000);
      const started = await two
        .http()
        .post(`/admin/tenants/user/${user.subject}/move`)
        .set(admin)
        .send({ cluster: 'b' })
        .expect(202);
      // The move has copied the items (without words) and is about to pause: the build writes
      // its first batch (SEARCH_BUILD_BATCH items) and is held again at its record.
      await until('the move copied the collection', () => pauseAsked, 20_000);
      const heldBefore = proxy.held();
      proxy.release();
      proxy.hold(
        (command) =>
          command.update === 'data_search_runs' &&
          (command.updates as Document[] | undefined)?.[0]?.u?.$set?.lastId !== undefined,
      );
      await until('the first batch is written', () => proxy.held() > heldBefore, 15_000);
      // The move pauses; the build's second batch comes while it is paused.
      gates.beforePause.resolve();
      await until('the move paused', () => pauseSet, 15_000);
      proxy.release();
      const state = async () =>
        (await two.http().get('/data/built/search').set(key).expect(200)).body as {
          state: string;
        };
      await until(
        'the second batch is refused, or written',
        async () => refused > 0 || (await state()).state !== 'building',
        15_000,
      );
      // Nothing was written to the paused source.
      const paused = await source.find({ _id: { $in: ['b3', 'b4', 'b5'] } }).toArray();
      expect(paused.map((doc) => [doc._id, doc[WORDS_FIELD]])).toEqual([
        ['b3', undefined],
        ['b4', undefined],
        ['b5', undefined],
      ]);
      gates.inPause.resolve();
      expect(await finished(one, (started.body as MoveBody).id)).toMatchObject({
        status: 'done',
      });
      await until('the build is over', async () => (await state()).state !== 'building', 20_000);
      expect(await state()).toMatchObject({ state: 'ready', indexed: 6, total: 6 });
      const moved = await one.connection
        .collection('data_collections')
        .findOne({ tenant: user.subject, name: 'built' });
      expect(moved).toMatchObject({ cluster: 'b' });
      const docs = await nativeCollection(one, moved).find().sort({ _id: 1 }).toArray();
      expect(docs.map((doc) => doc._id)).toEqual(titles.map((_, i) => `b${i}`));
      for (const doc of docs)
        expect([doc._id, doc[WORDS_FIELD]]).toEqual([doc._id, itemWords(doc, rule)]);
      const found = await one.http().get('/data/built').query({ q: 'red sho' }).set(key);
      expect(ids(found, '_id')).toEqual(['b0']);
      const counted = await two.http().get('/data/built/count').query({ q: 'shoes' }).set(key);
      expect(counted.body).toMatchObject({ count: 2 });
    } finally {
      release();
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('refuses what cannot be moved, naming why', async () => {
    const user = await createUser(one, { region: 'eu' });
    const path = `/admin/tenants/user/${user.subject}/move`;
    const post = (cluster: unknown) => one.http().post(path).set(admin).send({ cluster });
    expectProblem(await post('nowhere'), 400, 'UNKNOWN_CLUSTER');
    expectProblem(await post(null), 400, 'VALIDATION_FAILED');
    expectProblem(await post('closed'), 409, 'CLUSTER_CLOSED');
    expectProblem(await post('a'), 409, 'ALREADY_ON_CLUSTER');
    expectProblem(
      await one
        .http()
        .post('/admin/tenants/user/no-such-user/move')
        .set(admin)
        .send({ cluster: 'b' }),
      404,
      'PROFILE_NOT_FOUND',
    );
    expectProblem(
      await one.http().post('/admin/tenants/galaxy/x/move').set(admin).send({ cluster: 'b' }),
      400,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await one.http().get('/admin/moves/0123456789abcdef01234567').set(admin),
      404,
      'MOVE_NOT_FOUND',
    );

    // One move per tenant at a time: the first is held up by its frozen target.
    await one
      .http()
      .post('/data/kept')
      .set({ 'X-Api-Key': user.apiKey })
      .send({ item: { k: 1 } })
      .expect(200);
    clusterB.freeze();
    try {
      const first = (await post('b').expect(202)).body as MoveBody;
      const second = await two.http().post(path).set(admin).send({ cluster: 'b' });
      expectProblem(second, 409, 'MOVE_RUNNING');
      expect(second.body.existingId).toBe(first.id);

      // An erasure started meanwhile waits for the move; no move starts while it runs.
      const erasure = await one
        .http()
        .delete(`/admin/users/${user.subject}`)
        .set(admin)
        .expect(202);
      const during = await post('b');
      expectProblem(during, 409, 'ERASURE_RUNNING');
      expect(during.body.existingId).toBe(erasure.body.id);
      clusterB.thaw();

      expect((await finished(one, first.id)).status).toBe('done');
      await until(
        'the erasure ends after the move',
        async () =>
          (await one.http().get(`/admin/erasures/${erasure.body.id}`).set(admin)).body.status ===
          'done',
        30_000,
      );
      // Nothing of the user is left anywhere: the erasure dropped what the move had moved.
      const entries = await one.connection
        .collection('data_collections')
        .countDocuments({ tenant: user.subject });
      expect(entries).toBe(0);
      const onB = await MongoClient.connect(clusterB.uri);
      try {
        const database = tenantDatabaseName(dbName, { kind: 'user', id: user.subject });
        const left = await onB.db(database).listCollections().toArray();
        expect(left.filter((c) => c.name.startsWith('d_'))).toEqual([]);
      } finally {
        await onB.close();
      }
    } finally {
      clusterB.thaw();
    }
  });

  it('lists every move once, newest first, a page at a time through Link', async () => {
    const pages = await collectPages(asOperator(two), '/admin/moves?limit=1');
    const listed = pages.flatMap((page) => ids(page));
    const stored = await one.connection
      .collection('tenant_moves')
      .find()
      .sort({ _id: -1 })
      .toArray();
    expect(listed).toEqual(stored.map((move) => String(move._id)));
    expect(listed.length).toBeGreaterThanOrEqual(2);
    expectProblem(
      await asOperator(one).get('/admin/moves?sort=startedAt'),
      400,
      'VALIDATION_FAILED',
    );
  });
});
