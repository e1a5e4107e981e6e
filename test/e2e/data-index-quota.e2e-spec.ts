import { createTestApp, uniqueDbName, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';

/**
 * MAX_INDEXES holds under concurrency, also across two service instances on one database:
 * an index is built only after its name has claimed one of the MAX_INDEXES slots.
 */
let a: TestApp;
let b: TestApp;
let user: TestUser;
const MAX = 2;

beforeAll(async () => {
  const env = { MONGODB_DB_NAME: uniqueDbName(__filename), MAX_INDEXES: String(MAX) };
  a = await createTestApp(__filename, env);
  b = await createTestApp(__filename, env);
  user = await createUser(a);
});
afterAll(async () => {
  await b?.app.close();
  await a?.close();
});

const createIndex = (app: TestApp, collection: string, body: object) =>
  app.http().post(`/data/${collection}/index`).set('X-Api-Key', user.apiKey).send(body);

async function indexNames(collection: string): Promise<string[]> {
  const res = await a
    .http()
    .get(`/data/${collection}/index`)
    .set('X-Api-Key', user.apiKey)
    .expect(200);
  return (res.body as { name: string }[]).map((i) => i.name).filter((n) => n !== '_id_');
}

it('lets exactly MAX_INDEXES of six concurrent creates through on one instance', async () => {
  const responses = await Promise.all(
    ['f1', 'f2', 'f3', 'f4', 'f5', 'f6'].map((field) => createIndex(a, 'one', { field })),
  );
  const statuses = responses.map((r) => r.status).sort();
  expect(statuses).toEqual([200, 200, 409, 409, 409, 409]);
  for (const r of responses.filter((r) => r.status === 409)) {
    expect(r.body.code).toBe('INDEX_QUOTA_EXCEEDED');
  }
  expect(await indexNames('one')).toHaveLength(MAX);
});

it('lets exactly MAX_INDEXES through when two instances create at once', async () => {
  await a
    .http()
    .post('/data/two')
    .set('X-Api-Key', user.apiKey)
    .send({ item: { x: 1 } })
    .expect(200);
  const responses = await Promise.all(
    ['g1', 'g2', 'g3', 'g4', 'g5', 'g6'].map((field, i) =>
      createIndex(i % 2 === 0 ? a : b, 'two', { field }),
    ),
  );
  expect(responses.filter((r) => r.status === 200)).toHaveLength(MAX);
  expect(responses.filter((r) => r.status === 409)).toHaveLength(6 - MAX);
  expect(await indexNames('two')).toHaveLength(MAX);
});

it('counts concurrent creates of the same index once', async () => {
  const responses = await Promise.all(
    [a, b, a, b].map((app) => createIndex(app, 'same', { field: 'k' })),
  );
  expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  expect(await indexNames('same')).toEqual(['k_1']);
  await createIndex(a, 'same', { field: 'l' }).expect(200);
  await createIndex(b, 'same', { field: 'm' }).expect(409);
});

it('gives a place back when an index is dropped', async () => {
  await createIndex(a, 'drop', { field: 'a' }).expect(200);
  await createIndex(a, 'drop', { field: 'b' }).expect(200);
  await createIndex(b, 'drop', { field: 'c' }).expect(409);
  await a
    .http()
    .delete('/data/drop/index')
    .set('X-Api-Key', user.apiKey)
    .send({ name: 'a_1' })
    .expect(204);
  await createIndex(b, 'drop', { field: 'c' }).expect(200);
  expect((await indexNames('drop')).sort()).toEqual(['b_1', 'c_1']);
});

it('gives the place back when the index cannot be built', async () => {
  for (const _id of ['x', 'y']) {
    await a
      .http()
      .post('/data/dupes')
      .set('X-Api-Key', user.apiKey)
      .send({ item: { _id, v: 1 } })
      .expect(200);
  }
  const refused = await createIndex(a, 'dupes', { field: 'v', unique: true }).expect(409);
  expect(refused.body.code).toBe('UNIQUE_INDEX_DUPLICATES');
  await createIndex(a, 'dupes', { field: 'p' }).expect(200);
  await createIndex(b, 'dupes', { field: 'q' }).expect(200);
  expect((await indexNames('dupes')).sort()).toEqual(['p_1', 'q_1']);
});
