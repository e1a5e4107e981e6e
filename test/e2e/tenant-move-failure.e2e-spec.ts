import {
  createTestApp,
  testDatabaseUri,
  TEST_ADMIN_KEY,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { createUser } from '../support/factories';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';
import { until } from '../support/until';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';

/**
 * A move whose pause can never end: a write to the collection stays under way (the test writes
 * its marker in `move_writes`, as a write that hangs would, dated so that it outlasts every
 * attempt) for longer than MOVE_MAX_WRITE_PAUSE_MS allows, on every attempt. The move gives up as
 * `failed`, naming why; the collection stays where it was and keeps taking writes, nothing of the
 * tenant is marked as moving any more, and once the write is gone a later move takes it across.
 *
 * And a write that is under way for longer than COLLECTION_DROP_GRACE_MS (its insert held by a
 * wire proxy in front of cluster a) while the move pauses: its marker still counts, so the move
 * does not compare and switch the collection behind it; the write is answered 200 and its item is
 * where the tenant reads.
 *
 * And a tombstone of a source an earlier move left on the cluster a later move brought the
 * collection back to (a tenant moved back, a move tried again after one that failed there), swept
 * for the first time once its grace is over: it no longer drops the collection now in its place.
 */
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
const dbName = uniqueDbName(__filename);
let clusterB: OwnDatabase;
let proxy: WireProxy;
let t: TestApp;
/** COLLECTION_DROP_GRACE_MS, also how long a marker counts without its instance renewing it. */
const GRACE_MS = 1000;

beforeAll(async () => {
  clusterB = await startOwnDatabase('move-fail-b');
  // Cluster a's tenant databases through a proxy that can hold one write's insert.
  proxy = await startWireProxy(testDatabaseUri());
  t = await createTestApp(__filename, {
    MONGODB_DB_NAME: dbName,
    DATA_CLUSTERS: JSON.stringify({
      a: { uri: proxy.uri, region: 'eu' },
      b: { uri: clusterB.uri, region: 'us' },
    }),
    REGISTRY_CACHE_MS: '200',
    COLLECTION_DROP_GRACE_MS: String(GRACE_MS),
    LIFECYCLE_POLL_MS: '200',
    MOVE_LEASE_MS: '3000',
    // A pause waits for writes under way for longer than the grace (80 % of it: 1.2 s), so a
    // marker that counted only for the grace would run out within the first pause.
    MOVE_MAX_WRITE_PAUSE_MS: '1500',
    // The held insert is not cut off by the driver while the move tries its pauses.
    QUERY_TIMEOUT_MS: '20000',
  });
});

afterAll(async () => {
  proxy?.release();
  await t?.close();
  await proxy?.close();
  await clusterB?.stop();
});

interface MoveBody {
  id: string;
  status: string;
  error: string | null;
  collections: number;
  collectionsCopied: number;
}

/**
 * A user in region eu with one item `first` in `collection`, and a move of it to cluster b
 * started: its key, its registry entry as stored, the move's id and the move's status now.
 */
async function moveUnderWay(collection: string, first: string) {
  const user = await createUser(t, { region: 'eu' });
  const key = { 'X-Api-Key': user.apiKey };
  await t
    .http()
    .post(`/data/${collection}`)
    .set(key)
    .send({ item: { _id: first } })
    .expect(200);
  const entry = () =>
    t.connection.collection('data_collections').findOne({ tenant: user.subject, name: collection });
  const started = await t
    .http()
    .post(`/admin/tenants/user/${user.subject}/move`)
    .set(admin)
    .send({ cluster: 'b' })
    .expect(202);
  const moveId = (started.body as MoveBody).id;
  const status = async () =>
    ((await t.http().get(`/admin/moves/${moveId}`).set(admin).expect(200)).body as MoveBody).status;
  return { user, key, entry, moveId, status };
}

it('gives up as failed when a write holds the pause too long, leaving the tenant working where it was', async () => {
  const { user, key, entry, moveId } = await moveUnderWay('slow', 'first');
  await until('the collection is marked as moving', async () => Boolean((await entry())?.moving));

  // A write under way that does not end: its marker, as the write gate inserts it.
  const markers = t.connection.collection('move_writes');
  const { insertedId } = await markers.insertOne({
    target: String((await entry())?._id),
    startedAt: new Date(Date.now() + 600_000),
  });

  let move: MoveBody | undefined;
  await until(
    'the move gives up',
    async () => {
      move = (await t.http().get(`/admin/moves/${moveId}`).set(admin).expect(200)).body as MoveBody;
      return move.status !== 'running';
    },
    20_000,
  );
  expect(move).toMatchObject({ status: 'failed', collections: 1, collectionsCopied: 0 });
  expect(move?.error).toMatch(/MOVE_MAX_WRITE_PAUSE_MS/);

  // The collection is where it was and takes writes; nothing is marked as moving.
  await t
    .http()
    .post('/data/slow')
    .set(key)
    .send({ item: { _id: 'later' } })
    .expect(200);
  const after = await entry();
  expect(after).toMatchObject({ cluster: 'a' });
  expect(after?.moving).toBeUndefined();
  const placement = await t.connection
    .collection('tenant_placements')
    .findOne({ _id: after?.database as never });
  expect(placement?.feedMoving).toBeUndefined();
  const items = await t.http().get('/data/slow').set(key).expect(200);
  expect((items.body as { _id: string }[]).map((i) => i._id).sort()).toEqual(['first', 'later']);

  // The write ends; moved again, the collection goes across.
  await markers.deleteOne({ _id: insertedId });
  const again = await t
    .http()
    .post(`/admin/tenants/user/${user.subject}/move`)
    .set(admin)
    .send({ cluster: 'b' })
    .expect(202);
  await until(
    'the second move ends',
    async () =>
      (
        (
          await t
            .http()
            .get(`/admin/moves/${(again.body as MoveBody).id}`)
            .set(admin)
        ).body as {
          status: string;
        }
      ).status === 'done',
    20_000,
  );
  expect(await entry()).toMatchObject({ cluster: 'b' });
  const read = await t.http().get('/data/slow').set(key).expect(200);
  expect((read.body as { _id: string }[]).map((i) => i._id).sort()).toEqual(['first', 'later']);
});

it('waits for a write under way for longer than COLLECTION_DROP_GRACE_MS: acknowledged, its item is where the tenant reads', async () => {
  const { key, entry, status } = await moveUnderWay('held', 'first');
  await until('the collection is marked as moving', async () => Boolean((await entry())?.moving));

  // A write passes the gate (its marker is written) and is held in its insert at the source.
  proxy.hold(
    (command) =>
      command.insert !== undefined &&
      Array.isArray(command.documents) &&
      (command.documents as { _id?: unknown }[]).some((doc) => doc._id === 'late'),
  );
  const write = t
    .http()
    .post('/data/held')
    .set(key)
    .send({ item: { _id: 'late' } })
    .then();
  await until('the write is held in its insert', () => proxy.held() > 0);

  // The move goes on meanwhile: it switches the collection, or gives up its pauses.
  await until(
    'the move switched the collection or ended',
    async () => (await entry())?.cluster === 'b' || (await status()) !== 'running',
    30_000,
  );
  proxy.release();
  expect((await write).status).toBe(200);

  // Acknowledged, so the item is where the tenant reads it, now and once the move has ended.
  await t.http().get('/data/held/_id/late').set(key).expect(200);
  await until('the move ends', async () => (await status()) !== 'running', 30_000);
  const items = await t.http().get('/data/held').set(key).expect(200);
  expect((items.body as { _id: string }[]).map((i) => i._id).sort()).toEqual(['first', 'late']);
});

it('leaves the collection a move put where an earlier move left a source: that tombstone, swept after its grace, drops nothing', async () => {
  const { key, entry, status } = await moveUnderWay('back', 'kept');
  await until('the move is done', async () => (await status()) === 'done', 20_000);
  const moved = await entry();
  expect(moved).toMatchObject({ cluster: 'b' });

  // The tombstone of a source moved away from where the collection is now, written by an earlier
  // move and not swept since its grace ended (the sweeps of a busy instance come late).
  const drops = t.connection.collection('data_collection_drops');
  await drops.insertOne({
    physical: moved?.physical,
    cluster: 'b',
    database: moved?.database,
    droppedAt: new Date(Date.now() - 10 * GRACE_MS),
    movedAway: true,
  });
  await until(
    'the sweep is done with the tombstones of the collection',
    async () => (await drops.countDocuments({ physical: moved?.physical })) === 0,
  );
  const items = await t.http().get('/data/back').set(key).expect(200);
  expect((items.body as { _id: string }[]).map((i) => i._id)).toEqual(['kept']);
});
