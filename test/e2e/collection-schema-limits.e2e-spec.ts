import { MongoClient } from 'mongodb';
import {
  createTestApp,
  testDatabaseUri,
  TEST_ADMIN_KEY,
  uniqueDbName,
  type TestApp,
} from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { expectInvalid, expectProblem } from '../support/problems';
import { startService, type Reply, type ServiceProcess } from '../support/service-process';

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

/**
 * No schema can stall an instance: the four schemas that froze one (validation doubling per
 * level of $refs, a quadratic uniqueItems, a pattern of 93,000 RE2 instructions, one wide $def
 * referenced 300 times) are refused at PUT with SCHEMA_TOO_COMPLEX or checked within the
 * bound, and while an item is checked `/health` answers (how fast is the benchmark's figure).
 * The service runs in a process of its own, with the default limits, so that its event loop is
 * not this test's.
 */
describe('no schema can stall an instance', () => {
  let service: ServiceProcess;
  let key: Record<string, string>;
  const dbName = uniqueDbName(__filename);

  beforeAll(async () => {
    service = await startService({ MONGODB_DB_NAME: dbName });
    const created = await service.send(
      'POST',
      '/admin/users',
      { 'X-Api-Key': TEST_ADMIN_KEY },
      {
        email: `stall-${dbName}@example.com`,
      },
    );
    expect(created.status).toBe(200);
    key = { 'X-Api-Key': (JSON.parse(created.body) as { apiKey: string }).apiKey };
  });
  afterAll(async () => {
    await service?.kill();
    const client = new MongoClient(testDatabaseUri(), { serverSelectionTimeoutMS: 5000 });
    try {
      await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
    }
  });

  const body = (reply: Reply) => JSON.parse(reply.body) as Record<string, unknown>;
  const putSchema = (collection: string, schema: unknown) =>
    service.send('PUT', `/data/${collection}/schema`, key, { schema });
  const expectTooComplex = (reply: Reply, limit: string) => {
    expect({ status: reply.status, code: body(reply).code }).toEqual({
      status: 400,
      code: 'SCHEMA_TOO_COMPLEX',
    });
    expect(body(reply).detail).toContain(limit);
  };

  /**
   * Sends the request and polls `/health` until it is answered, one poll at a time (10 ms
   * apart), each of which must answer 200. How long a poll waits is a benchmark's figure, not
   * this test's: `npm run bench -- --schema-only` measures /health while hostile writes are
   * validated (docs/benchmarks.md), since a wall-clock bound here would rest on the machine's
   * load.
   */
  async function healthWhile(request: () => Promise<Reply>): Promise<Reply> {
    let done = false;
    const polling = (async () => {
      while (!done) {
        const health = await service.send('GET', '/health');
        expect(health.status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    try {
      return await request();
    } finally {
      done = true;
      await polling;
    }
  }

  it('refuses $defs d0…d39, each an allOf of two $refs to the next, and serves on', async () => {
    const $defs = Object.fromEntries(
      Array.from({ length: 41 }, (_, i) => [
        `d${i}`,
        i === 40 ? {} : { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] },
      ]),
    );
    const schema = { properties: { a: { $ref: '#/$defs/d0' } }, $defs };
    expect(JSON.stringify(schema).length).toBeLessThan(4096);
    expectTooComplex(await putSchema('doubling', schema), 'SCHEMA_MAX_EXPANDED_NODES');
    const written = await service.send('POST', '/data/doubling', key, { item: { a: 1 } });
    expect(written.status).toBe(200);
  });

  // Refused before anything is compiled: item-schemas.spec.ts counts the compiles (none).
  it('refuses one 300-property $def referenced 300 times in an allOf', async () => {
    const schema = {
      $defs: {
        wide: {
          properties: Object.fromEntries(
            Array.from({ length: 300 }, (_, i) => [`p${i}`, { type: 'string' }]),
          ),
        },
      },
      allOf: Array.from({ length: 300 }, () => ({ $ref: '#/$defs/wide' })),
    };
    expectTooComplex(await putSchema('wide', schema), 'SCHEMA_MAX_EXPANDED_NODES');
  });

  it('refuses the pattern (w0|…|w299){1000}, naming SCHEMA_PATTERN_MAX_PROGRAM', async () => {
    const pattern = `(${Array.from({ length: 300 }, (_, i) => `w${i}`).join('|')}){1000}`;
    expectTooComplex(
      await putSchema('pattern', { properties: { s: { type: 'string', pattern } } }),
      'SCHEMA_PATTERN_MAX_PROGRAM',
    );
  });

  // The 90,000 numbers of the report are checked within SCHEMA_CHECK_MAX_MS
  // (src/data/rules/schema/item-schemas.spec.ts and the test after this one).
  it('checks uniqueItems over 10,000 numbers while /health answers', async () => {
    const put = await putSchema('unique', {
      properties: { a: { type: 'array', uniqueItems: true } },
    });
    expect(put.status).toBe(200);
    const numbers = Array.from({ length: 10_000 }, (_, i) => 100_000 + i * 7);
    const reply = await healthWhile(() =>
      service.send('POST', '/data/unique', key, { item: { a: numbers } }),
    );
    expect(reply.status).toBe(200);
    const twice = await service.send('POST', '/data/unique', key, {
      item: { a: [...numbers.slice(0, 1000), 100_007] },
    });
    expect({ status: twice.status, code: body(twice).code }).toEqual({
      status: 422,
      code: 'SCHEMA_VIOLATION',
    });
  });

  // Stored, not stopped at SCHEMA_CHECK_MAX_MS: the check reads each element once
  // (item-schemas.spec.ts counts the reads); its time is the benchmark's (`npm run bench`, the
  // /health comparison during such POSTs).
  it('stores an item of 90,000 numbers (540 KB) under uniqueItems', async () => {
    const numbers = Array.from({ length: 90_000 }, (_, i) => 100_000 + i * 7);
    const reply = await service.send('POST', '/data/unique', key, { item: { a: numbers } });
    expect(reply.status).toBe(200);
  });

  it('stops a check beyond SCHEMA_CHECK_MAX_MS with SCHEMA_TOO_COMPLEX; /health answers throughout', async () => {
    // Within every static limit (a few nodes, 60 KB), but each element is compared with 5,000
    // enum members: 4,000 elements take the better part of a second.
    const members = Array.from({ length: 1000 }, (_, i) => ({ k: i }));
    const conditions = Array.from({ length: 5 }, () => ({ enum: members }));
    const put = await putSchema('costly', { properties: { a: { items: { allOf: conditions } } } });
    expect({ status: put.status, body: body(put) }).toMatchObject({ status: 200 });
    const numbers = Array.from({ length: 4_000 }, () => ({ k: -1 }));
    const reply = await healthWhile(() =>
      service.send('POST', '/data/costly', key, { item: { a: numbers } }),
    );
    // It stopped at the bound, not after the seconds the check takes.
    expectTooComplex(reply, 'SCHEMA_CHECK_MAX_MS');
    const listed = await service.send('GET', '/data/costly', key);
    // Nothing was written: the list is empty.
    expect(listed.status).toBe(204);
    const small = await service.send('POST', '/data/costly', key, { item: { a: [{ k: 1 }] } });
    expect(small.status).toBe(200);
  });
});
