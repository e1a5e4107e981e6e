import { tenantDatabaseName } from '../../src/placement';
import {
  createTestApp,
  everyDatabase,
  TEST_ADMIN_KEY,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { documentsNaming } from '../support/database-scan';
import { readFixture, restoreCollections, type RecordedCollections } from '../support/fixture';
import { createUser } from '../support/factories';
import { expectProblem } from '../support/problems';

/**
 * Boots today's service on a database that the version before tenant placement populated
 * through its API (test/fixtures/before-placement.json, recorded with
 * test/fixtures/record-fixture.ts): a user with a sub profile, collections in two branches with
 * an index and uniqueField claims, a dropped collection, a project, and a team with a collection.
 * Its tenants were never placed: their collections stay in the main database, where they are read
 * and written on, while new tenants get databases of their own.
 */
interface Fixture {
  keys: { root: string; sub: string; team: string };
  subject: string;
  teamId: string;
  collections: RecordedCollections;
}

const fixture = readFixture<Fixture>('before-placement.json');
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
const dbName = uniqueDbName(__filename);
let t: TestApp;
let second: TestApp;

beforeAll(async () => {
  await restoreCollections(dbName, fixture.collections);
  // Two instances start on it at once, as a rolling upgrade would.
  // Short caches and grace: a move here takes seconds, not minutes.
  const env = {
    MONGODB_DB_NAME: dbName,
    REGISTRY_CACHE_MS: '200',
    COLLECTION_DROP_GRACE_MS: '1000',
    LIFECYCLE_POLL_MS: '200',
  };
  [t, second] = await Promise.all([createTestApp(__filename, env), createTestApp(__filename, env)]);
});

afterAll(async () => {
  await second?.app.close();
  await t?.close();
});

const as = (key: string) => ({ 'X-Api-Key': key });

/** What the fixture's user reads: its collections, items (with ETags) and indexes. */
async function readings(app: TestApp): Promise<unknown[]> {
  const get = async (path: string, key: string, branch = '') => {
    const res = await app.http().get(path).set(as(key)).set('X-Branch', branch).expect(200);
    return [res.body, res.headers.etag];
  };
  return [
    await get('/data', fixture.keys.root),
    await get('/data/orders', fixture.keys.root),
    await get('/data/orders', fixture.keys.sub),
    await get('/data/orders/_id/o2', fixture.keys.root),
    await get('/data/orders/index', fixture.keys.root),
    await get('/data/fresh/_id/f1', fixture.keys.root),
    await get('/data/notes/_id/n1', fixture.keys.root, 'dev'),
  ];
}

/** What the fixture's tenants read, through either instance. */
async function readsAsRecorded(): Promise<void> {
  for (const app of [t, second]) {
    const orders = await app.http().get('/data/orders').set(as(fixture.keys.root)).expect(200);
    expect((orders.body as { _id: string }[]).map((item) => item._id).sort()).toEqual([
      'o1',
      'o2',
      's1',
    ]);
    await app
      .http()
      .get('/data/orders/_id/o2')
      .set(as(fixture.keys.root))
      .expect(200)
      .expect((res) => expect(res.body).toMatchObject({ code: 'A-2', total: 25 }));
    const own = await app.http().get('/data/orders').set(as(fixture.keys.sub)).expect(200);
    expect((own.body as { _id: string }[]).map((item) => item._id)).toEqual(['s1']);
    await app
      .http()
      .get('/data/notes/_id/n1')
      .set(as(fixture.keys.root))
      .set('X-Branch', 'dev')
      .expect(200);
    await app.http().get('/data/board/_id/b1').set(as(fixture.keys.team)).expect(200);
    const indexes = await app
      .http()
      .get('/data/orders/index')
      .set(as(fixture.keys.root))
      .expect(200);
    expect(JSON.stringify(indexes.body)).toContain('total');
    // The collection dropped before the upgrade stays gone.
    const listed = await app.http().get('/data').set(as(fixture.keys.root)).expect(200);
    expect((listed.body as { name: string }[]).map((c) => c.name)).toEqual(['orders']);
    const projects = await app.http().get('/project').set(as(fixture.keys.root)).expect(200);
    expect((projects.body as { name: string }[]).map((p) => p.name)).toEqual(['Upgrade']);
    await app.http().get('/events').set(as(fixture.keys.root)).expect(200);
  }
}

describe('data written before tenants were placed', () => {
  it('is read as it was, through either instance', async () => {
    await readsAsRecorded();
  });

  it('keeps its rules: uniqueField claims and the index hold', async () => {
    expectProblem(
      await t
        .http()
        .post('/data/orders')
        .set(as(fixture.keys.root))
        .send({ item: { code: 'A-1' }, uniqueField: 'code' }),
      409,
      'DUPLICATE_ITEM',
    );
    await second
      .http()
      .post('/data/orders')
      .set(as(fixture.keys.root))
      .send({ item: { _id: 'o3', code: 'A-3' }, uniqueField: 'code' })
      .expect(200);
  });

  it('reads as placed in the main database, where its new collections go too', async () => {
    for (const [kind, id] of [
      ['user', fixture.subject],
      ['team', fixture.teamId],
    ] as const) {
      const res = await t
        .http()
        .get(`/admin/tenants/${kind}/${id}/placement`)
        .set(admin)
        .expect(200);
      expect(res.body).toEqual({ cluster: null, database: dbName });
    }
    await t
      .http()
      .post('/data/fresh')
      .set(as(fixture.keys.root))
      .send({ item: { _id: 'f1' } })
      .expect(200);
    const entry = await t.connection
      .collection('data_collections')
      .findOne({ tenant: fixture.subject, name: 'fresh' });
    expect(entry).not.toHaveProperty('cluster');
    expect(await t.connection.collection(entry?.physical as string).countDocuments()).toBe(1);
  });

  it('sits beside new tenants, which get databases of their own', async () => {
    const user = await createUser(second);
    const placement = await t
      .http()
      .get(`/admin/tenants/user/${user.subject}/placement`)
      .set(admin)
      .expect(200);
    const database = tenantDatabaseName(dbName, { kind: 'user', id: user.subject });
    expect(placement.body).toEqual({ cluster: 'default', database });
    await t
      .http()
      .post('/data/orders')
      .set(as(user.apiKey))
      .send({ item: { _id: 'x' } })
      .expect(200);
    const clusters = await t.http().get('/admin/clusters').set(admin).expect(200);
    expect(clusters.body).toEqual([
      expect.objectContaining({ name: 'default', tenants: 1, collections: 1, reachable: true }),
    ]);
  });

  it('is moved to a database of its own with the API, and reads the same afterwards', async () => {
    const before = await Promise.all([t, second].map(readings));
    expect(before[0]).toEqual(before[1]);
    const started = await second
      .http()
      .post(`/admin/tenants/user/${fixture.subject}/move`)
      .set(admin)
      .send({ cluster: 'default' })
      .expect(202);
    expect(started.body).toMatchObject({ from: null, cluster: 'default', collections: 0 });
    let move = started.body as { status: string; collections: number };
    for (let i = 0; i < 300 && move.status === 'running'; i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      move = (await t.http().get(`/admin/moves/${started.body.id}`).set(admin).expect(200)).body;
    }
    // orders, notes (branch dev) and fresh.
    expect(move).toMatchObject({ status: 'done', collections: 3, collectionsCopied: 3 });
    const database = tenantDatabaseName(dbName, { kind: 'user', id: fixture.subject });
    const placement = await t
      .http()
      .get(`/admin/tenants/user/${fixture.subject}/placement`)
      .set(admin)
      .expect(200);
    expect(placement.body).toEqual({ cluster: 'default', database });
    // The main database keeps none of its items or claims.
    const entries = await t.connection
      .collection('data_collections')
      .find({ tenant: fixture.subject })
      .toArray();
    expect(entries).toHaveLength(3);
    for (const entry of entries) {
      expect(entry).toMatchObject({ cluster: 'default', database });
      expect(await t.connection.collection(entry.physical as string).countDocuments()).toBe(0);
      expect(
        await t.connection
          .collection('data_unique_claims')
          .countDocuments({ physical: entry.physical }),
      ).toBe(0);
    }
    expect(await Promise.all([t, second].map(readings))).toEqual(before);
    expectProblem(
      await second
        .http()
        .post('/data/orders')
        .set(as(fixture.keys.root))
        .send({ item: { code: 'A-3' }, uniqueField: 'code' }),
      409,
      'DUPLICATE_ITEM',
    );
  });

  it('is erased completely: nothing in any database names the user afterwards', async () => {
    const started = await t.http().delete(`/admin/users/${fixture.subject}`).set(admin).expect(202);
    let status = '';
    for (let i = 0; i < 200 && status !== 'done'; i += 1) {
      const res = await t.http().get(`/admin/erasures/${started.body.id}`).set(admin).expect(200);
      status = (res.body as { status: string }).status;
      if (status !== 'done') await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('done');
    expect(await documentsNaming(await everyDatabase(t), fixture.subject)).toEqual([]);
  });
});
