import { createTestApp, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { expectInvalid, expectProblem } from '../support/problems';

/**
 * The limits of collection schemas are the deployment's: SCHEMA_MAX_BYTES, SCHEMA_MAX_ERRORS
 * (errors per item, violating items per schema-violations page) and SCHEMA_MULTI_UPDATE_MAX,
 * each set low here and enforced at that value.
 */
let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp(__filename, {
    SCHEMA_MAX_BYTES: '1024',
    SCHEMA_MAX_ERRORS: '2',
    SCHEMA_MULTI_UPDATE_MAX: '3',
  });
  user = await createUser(t);
});
afterAll(async () => t.close());

const key = () => ({ 'X-Api-Key': user.apiKey });
/** Four required fields: an empty item breaks all four. */
const SCHEMA = { required: ['a', 'b', 'c', 'd'] };

it('refuses a schema over SCHEMA_MAX_BYTES', async () => {
  const big = { description: 'x'.repeat(1100) };
  expectInvalid(await t.http().put('/data/big/schema').set(key()).send({ schema: big }), 'schema');
  await t
    .http()
    .put('/data/big/schema')
    .set(key())
    .send({ schema: { description: 'x'.repeat(900) } })
    .expect(200);
});

it('reports at most SCHEMA_MAX_ERRORS errors per item and violating items per page', async () => {
  for (let i = 0; i < 4; i += 1)
    await t
      .http()
      .post('/data/few')
      .set(key())
      .send({ item: { _id: `f${i}` } })
      .expect(200);
  await t.http().put('/data/few/schema').set(key()).send({ schema: SCHEMA }).expect(200);
  const refused = await t.http().post('/data/few').set(key()).send({ item: {} });
  expectProblem(refused, 422, 'SCHEMA_VIOLATION');
  expect(refused.body.errors).toHaveLength(2);
  const page = await t.http().get('/data/few/schema-violations').set(key()).expect(200);
  expect(page.body).toMatchObject({ checked: 4, violating: 4 });
  expect(page.body.sample).toHaveLength(2);
  expect(page.body.sample[0].errors).toHaveLength(2);
});

it('updates at most SCHEMA_MULTI_UPDATE_MAX items at once under a schema', async () => {
  for (let i = 0; i < 4; i += 1)
    await t
      .http()
      .post('/data/many')
      .set(key())
      .send({ item: { _id: `m${i}`, g: i < 3 ? 'three' : 'one' } })
      .expect(200);
  await t
    .http()
    .put('/data/many/schema')
    .set(key())
    .send({ schema: { properties: { v: { type: 'integer' } } } })
    .expect(200);
  const update = (filter: object) =>
    t
      .http()
      .put('/data/many')
      .set(key())
      .send({ filter, values: { v: 1 }, multi: true });
  expect((await update({ g: 'three' }).expect(200)).body).toEqual({ matched: 3, modified: 3 });
  expectInvalid(await update({}), 'filter');
  const untouched = await t.http().get('/data/many/_id/m3').set(key()).expect(200);
  expect(untouched.body).not.toHaveProperty('v');
});
