import { createTestApp, uniqueDbName, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { expectProblem } from '../support/problems';

/**
 * A collection's rules on two instances of one database: the instance that changes a rule
 * enforces it at once; the other one within REGISTRY_CACHE_MS, after which it has read the
 * registry entry again. Deterministic: the other instance is asked only once its cached entry
 * has certainly aged past the cache's time.
 */
const REGISTRY_CACHE_MS = 1000;
let a: TestApp;
let b: TestApp;
let user: TestUser;

beforeAll(async () => {
  const shared = {
    MONGODB_DB_NAME: uniqueDbName(__filename),
    REGISTRY_CACHE_MS: String(REGISTRY_CACHE_MS),
  };
  a = await createTestApp(__filename, shared);
  b = await createTestApp(__filename, shared);
  user = await createUser(a);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const post = (t: TestApp, item: object) =>
  t.http().post('/data/shared').set('X-Api-Key', user.apiKey).send({ item });
const pastTheCache = () => new Promise((resolve) => setTimeout(resolve, REGISTRY_CACHE_MS + 100));

it('a schema put on one instance holds on the other within REGISTRY_CACHE_MS, and so does its removal', async () => {
  // Both instances have read (and cached) the collection's entry without a schema.
  await post(a, { n: 1 }).expect(200);
  await post(b, { n: 2 }).expect(200);
  await a
    .http()
    .put('/data/shared/schema')
    .set('X-Api-Key', user.apiKey)
    .send({ schema: { properties: { n: { type: 'string' } } } })
    .expect(200);
  expectProblem(await post(a, { n: 3 }), 422, 'SCHEMA_VIOLATION');
  await pastTheCache();
  expectProblem(await post(b, { n: 4 }), 422, 'SCHEMA_VIOLATION');
  await post(b, { n: 'four' }).expect(200);

  await b.http().delete('/data/shared/schema').set('X-Api-Key', user.apiKey).expect(204);
  await post(b, { n: 5 }).expect(200);
  await pastTheCache();
  await post(a, { n: 6 }).expect(200);
});
