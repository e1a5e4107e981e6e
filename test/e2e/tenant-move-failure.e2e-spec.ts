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

/**
 * A move whose pause can never end: a write to the collection stays under way (the test writes
 * its marker in `move_writes`, as a write that hangs would, dated so that it outlasts every
 * attempt) for longer than MOVE_MAX_WRITE_PAUSE_MS allows, on every attempt. The move gives up as
 * `failed`, naming why; the collection stays where it was and keeps taking writes, nothing of the
 * tenant is marked as moving any more, and once the write is gone a later move takes it across.
 */
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
const dbName = uniqueDbName(__filename);
let clusterB: OwnDatabase;
let t: TestApp;

beforeAll(async () => {
  clusterB = await startOwnDatabase('move-fail-b');
  t = await createTestApp(__filename, {
    MONGODB_DB_NAME: dbName,
    DATA_CLUSTERS: JSON.stringify({
      a: { uri: testDatabaseUri(), region: 'eu' },
      b: { uri: clusterB.uri, region: 'us' },
    }),
    REGISTRY_CACHE_MS: '200',
    COLLECTION_DROP_GRACE_MS: '1000',
    LIFECYCLE_POLL_MS: '200',
    MOVE_LEASE_MS: '3000',
    MOVE_MAX_WRITE_PAUSE_MS: '300',
  });
});

afterAll(async () => {
  await t?.close();
  await clusterB?.stop();
});

interface MoveBody {
  id: string;
  status: string;
  error: string | null;
  collections: number;
  collectionsCopied: number;
}

it('gives up as failed when a write holds the pause too long, leaving the tenant working where it was', async () => {
  const user = await createUser(t, { region: 'eu' });
  const key = { 'X-Api-Key': user.apiKey };
  await t
    .http()
    .post('/data/slow')
    .set(key)
    .send({ item: { _id: 'first' } })
    .expect(200);
  const entry = () =>
    t.connection.collection('data_collections').findOne({ tenant: user.subject, name: 'slow' });

  const started = await t
    .http()
    .post(`/admin/tenants/user/${user.subject}/move`)
    .set(admin)
    .send({ cluster: 'b' })
    .expect(202);
  const moveId = (started.body as MoveBody).id;
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
