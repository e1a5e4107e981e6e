import { MongoClient } from 'mongodb';
import { tenantDatabaseName } from '../../src/placement/tenant-location';
import { TEST_ADMIN_KEY, testDatabaseUri, uniqueDbName } from '../support/app';
import { RawBody, startService, type Reply, type ServiceProcess } from '../support/service-process';

/**
 * The limits every tenant is held to (docs/plans.md), read per tenant at the moment they are
 * checked, with two instances (`node dist/main.js`) on one database: concurrent
 * writers through both end with exactly the limit of collections, indexes and webhooks and at
 * most the limit of file bytes; every refusal is a 409 naming the limit, its value, the usage and
 * the plan (null: the deployment's settings, the tenants here hold none); a refused write leaves
 * nothing behind. A third instance started with lower settings is the tenant's downgrade: what
 * is over its limits stays readable, deletable and exportable, and only growth is refused.
 */
const MAX_COLLECTIONS = 3;
const MAX_INDEXES = 2;
const WEBHOOK_MAX = 3;
const FILE_QUOTA_BYTES = 100_000;
const FILE_BYTES = 30_000;
const IMPORT_MAX_BYTES = 4096;
const ENV = {
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  MAX_COLLECTIONS: String(MAX_COLLECTIONS),
  MAX_INDEXES: String(MAX_INDEXES),
  WEBHOOK_MAX: String(WEBHOOK_MAX),
  FILE_QUOTA_BYTES: String(FILE_QUOTA_BYTES),
  IMPORT_MAX_BYTES: String(IMPORT_MAX_BYTES),
};
/** The downgrade: every limit below what the tenant holds by then. */
const LOWER = {
  ...ENV,
  MAX_COLLECTIONS: '1',
  MAX_INDEXES: '1',
  WEBHOOK_MAX: '1',
  FILE_QUOTA_BYTES: '1000',
};
/** Instances start within this even on a loaded machine (two cores shared with other work). */
const READY_WITHIN_MS = 90_000;
const dbName = uniqueDbName(__filename);
const subjects: string[] = [];
let a: ServiceProcess;
let b: ServiceProcess;
let lower: ServiceProcess | undefined;
let client: MongoClient;

beforeAll(async () => {
  [a, b] = await Promise.all([
    startService({ ...ENV, MONGODB_DB_NAME: dbName }, READY_WITHIN_MS),
    startService({ ...ENV, MONGODB_DB_NAME: dbName }, READY_WITHIN_MS),
  ]);
  client = new MongoClient(testDatabaseUri());
}, 3 * READY_WITHIN_MS);

afterAll(async () => {
  await Promise.all([a?.kill(), b?.kill(), lower?.kill()]);
  for (const subject of subjects)
    await client.db(tenantDatabaseName(dbName, { kind: 'user', id: subject })).dropDatabase();
  await client?.db(dbName).dropDatabase();
  await client?.close();
});

/** Instance a for even i, b for odd i. */
const instance = (i: number): ServiceProcess => (i % 2 === 0 ? a : b);
const keyed = (key: string) => ({ 'X-Api-Key': key });
const bodyOf = (reply: Reply) => JSON.parse(reply.body) as Record<string, unknown>;
const statuses = (replies: Reply[]) => replies.map((r) => r.status).sort((x, y) => x - y);

async function newUser(): Promise<{ key: string; subject: string }> {
  const reply = await a.send('POST', '/admin/users', keyed(TEST_ADMIN_KEY), {
    email: `limits-${Math.random().toString(36).slice(2)}@example.com`,
  });
  expect(reply.status).toBe(200);
  const body = bodyOf(reply) as { apiKey: string; profile: { subject: string } };
  subjects.push(body.profile.subject);
  return { key: body.apiKey, subject: body.profile.subject };
}

function upload(service: ServiceProcess, key: string, name: string, bytes: number) {
  return service.send(
    'POST',
    `/files?name=${name}`,
    { ...keyed(key), 'Content-Type': 'application/octet-stream' },
    new RawBody(Buffer.alloc(bytes, name)),
  );
}

/** The problem of a refusal at a limit: its status, code and members. */
function expectRefusal(
  reply: Reply,
  status: number,
  code: string,
  members: { limit: string; max: number; usage: number },
): void {
  expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect({ status: reply.status, ...bodyOf(reply) }).toMatchObject({
    status,
    code,
    ...members,
    plan: null,
  });
}

const webhook = (i: number) => ({ url: `http://127.0.0.1:9/hook-${i}`, events: ['created'] });

/** The user's documents of a main-database collection. */
const stored = (collection: string, subject: string) =>
  client.db(dbName).collection(collection).countDocuments({ tenantKind: 'user', tenant: subject });

describe('concurrent writers through two instances', () => {
  it('end with exactly MAX_COLLECTIONS collections, each refusal naming the limit', async () => {
    const { key, subject } = await newUser();
    const replies = await Promise.all(
      Array.from({ length: 3 * MAX_COLLECTIONS }, (_, i) =>
        instance(i).send('POST', `/data/c${i}`, keyed(key), { item: { i } }),
      ),
    );
    expect(statuses(replies)).toEqual([
      ...Array<number>(MAX_COLLECTIONS).fill(200),
      ...Array<number>(2 * MAX_COLLECTIONS).fill(409),
    ]);
    for (const r of replies.filter((r) => r.status !== 200))
      expectRefusal(r, 409, 'COLLECTION_QUOTA_EXCEEDED', {
        limit: 'collections',
        max: MAX_COLLECTIONS,
        usage: MAX_COLLECTIONS,
      });
    // Nothing half-written: no registry entry, and no item, of a refused collection.
    expect(await stored('data_collections', subject)).toBe(MAX_COLLECTIONS);
    const refused = replies.flatMap((r, i) => (r.status === 200 ? [] : [i]));
    for (const i of refused)
      expect((await instance(i + 1).send('GET', `/data/c${i}`, keyed(key))).status).toBe(204);
  });

  it('end with exactly MAX_INDEXES indexes of one collection, each refusal naming the limit', async () => {
    const { key } = await newUser();
    expect((await a.send('POST', '/data/indexed', keyed(key), { item: { x: 1 } })).status).toBe(
      200,
    );
    const replies = await Promise.all(
      Array.from({ length: 3 * MAX_INDEXES }, (_, i) =>
        instance(i).send('POST', '/data/indexed/index', keyed(key), { field: `f${i}` }),
      ),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(MAX_INDEXES);
    for (const r of replies.filter((r) => r.status !== 200))
      expectRefusal(r, 409, 'INDEX_QUOTA_EXCEEDED', {
        limit: 'indexesPerCollection',
        max: MAX_INDEXES,
        usage: MAX_INDEXES,
      });
    const indexes = bodyOf(await b.send('GET', '/data/indexed/index', keyed(key))) as unknown as {
      name: string;
    }[];
    expect(indexes.filter((i) => i.name !== '_id_')).toHaveLength(MAX_INDEXES);
  });

  it('end with exactly WEBHOOK_MAX webhooks, each refusal naming the limit, and a delete frees a place', async () => {
    const { key, subject } = await newUser();
    const replies = await Promise.all(
      Array.from({ length: 3 * WEBHOOK_MAX }, (_, i) =>
        instance(i).send('POST', '/webhooks', keyed(key), webhook(i)),
      ),
    );
    expect(statuses(replies)).toEqual([
      ...Array<number>(WEBHOOK_MAX).fill(200),
      ...Array<number>(2 * WEBHOOK_MAX).fill(409),
    ]);
    for (const r of replies.filter((r) => r.status !== 200))
      expectRefusal(r, 409, 'WEBHOOK_QUOTA_EXCEEDED', {
        limit: 'webhooks',
        max: WEBHOOK_MAX,
        usage: WEBHOOK_MAX,
      });
    // Nothing half-written: as many webhooks and slots as created.
    expect(await stored('webhooks', subject)).toBe(WEBHOOK_MAX);
    expect(await stored('webhook_slots', subject)).toBe(WEBHOOK_MAX);
    const listed = JSON.parse((await b.send('GET', '/webhooks', keyed(key))).body) as {
      id: string;
    }[];
    expect(listed).toHaveLength(WEBHOOK_MAX);

    const gone = listed[0]!.id;
    expect((await a.send('DELETE', `/webhooks/${gone}`, keyed(key))).status).toBe(204);
    expect(await stored('webhook_slots', subject)).toBe(WEBHOOK_MAX - 1);
    const again = await Promise.all([
      a.send('POST', '/webhooks', keyed(key), webhook(100)),
      b.send('POST', '/webhooks', keyed(key), webhook(101)),
    ]);
    expect(statuses(again)).toEqual([200, 409]);
    expect(await stored('webhooks', subject)).toBe(WEBHOOK_MAX);
  });

  it('store at most FILE_QUOTA_BYTES of files, each refusal naming the limit and the bytes used', async () => {
    const { key } = await newUser();
    const fits = Math.floor(FILE_QUOTA_BYTES / FILE_BYTES);
    const replies = await Promise.all(
      Array.from({ length: 2 * fits }, (_, i) => upload(instance(i), key, `f${i}`, FILE_BYTES)),
    );
    expect(statuses(replies)).toEqual([
      ...Array<number>(fits).fill(201),
      ...Array<number>(fits).fill(409),
    ]);
    for (const r of replies.filter((r) => r.status !== 201))
      expectRefusal(r, 409, 'FILE_QUOTA_EXCEEDED', {
        limit: 'fileBytes',
        max: FILE_QUOTA_BYTES,
        usage: fits * FILE_BYTES,
      });
    // Nothing half-written: the refused uploads left no file and no counted bytes.
    const files = JSON.parse((await b.send('GET', '/files', keyed(key))).body) as {
      size: number;
    }[];
    expect(files.map((f) => f.size)).toEqual(Array<number>(fits).fill(FILE_BYTES));
    const me = bodyOf(await a.send('GET', '/me', keyed(key))) as { quota: { files: unknown } };
    expect(me.quota.files).toEqual({ used: fits * FILE_BYTES, limit: FILE_QUOTA_BYTES });
  });
});

describe('an import body', () => {
  const item = (i: number) =>
    `${JSON.stringify({ type: 'item', collection: 'imported', item: { _id: `i${i}`, pad: 'x'.repeat(90) } })}\n`;
  const ndjson = (lines: number) =>
    Buffer.from(Array.from({ length: lines }, (_, i) => item(i)).join(''));
  const importing = (key: string) => ({
    ...keyed(key),
    'Content-Type': 'application/x-ndjson',
  });

  it('over IMPORT_MAX_BYTES by its Content-Length is refused before it is read', async () => {
    const { key } = await newUser();
    const body = ndjson(60);
    expect(body.length).toBeGreaterThan(IMPORT_MAX_BYTES);
    const reply = await a.send('POST', '/import', importing(key), new RawBody(body));
    expectRefusal(reply, 413, 'PAYLOAD_TOO_LARGE', {
      limit: 'importBytes',
      max: IMPORT_MAX_BYTES,
      usage: body.length,
    });
    expect((await a.send('GET', '/data/imported', keyed(key))).status).toBe(204);
  });

  it('sent without Content-Length stops where it passes IMPORT_MAX_BYTES, its result line naming the limit', async () => {
    const { key } = await newUser();
    const reply = await b.send('POST', '/import', importing(key), new RawBody(ndjson(60), true));
    expect(reply.status).toBe(200);
    const lines = reply.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const stop = lines.find((l) => l.status === 413);
    expect(stop).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      limit: 'importBytes',
      max: IMPORT_MAX_BYTES,
      plan: null,
    });
    expect(stop!.usage as number).toBeGreaterThan(IMPORT_MAX_BYTES);
    // Only lines within the limit were imported (those of the chunks read before it passed).
    const created = lines.filter((l) => l.status === 201).length;
    expect(created * item(0).length).toBeLessThanOrEqual(IMPORT_MAX_BYTES);
    expect(lines.at(-1)).toMatchObject({ type: 'totals', created });
  });
});

describe('a downgrade (an instance with lower limits)', () => {
  it(
    'keeps everything over the new limits readable, deletable and exportable, and refuses only growth',
    async () => {
      const { key } = await newUser();
      for (let i = 0; i < MAX_COLLECTIONS; i += 1)
        expect((await a.send('POST', `/data/d${i}`, keyed(key), { item: { i } })).status).toBe(200);
      for (const field of ['x', 'y'])
        expect((await a.send('POST', '/data/d0/index', keyed(key), { field })).status).toBe(200);
      for (let i = 0; i < WEBHOOK_MAX; i += 1)
        expect((await b.send('POST', '/webhooks', keyed(key), webhook(i))).status).toBe(200);
      const file = await upload(a, key, 'kept', FILE_BYTES);
      expect(file.status).toBe(201);
      const fileId = (bodyOf(file) as { id: string }).id;

      lower = await startService({ ...LOWER, MONGODB_DB_NAME: dbName }, READY_WITHIN_MS);
      const low = lower;

      // Reads and exports go on over every limit.
      expect(JSON.parse((await low.send('GET', '/data', keyed(key))).body)).toHaveLength(
        MAX_COLLECTIONS,
      );
      expect((await low.send('GET', '/data/d2', keyed(key))).status).toBe(200);
      expect((await low.send('GET', `/files/${fileId}/content`, keyed(key))).status).toBe(200);
      expect((await low.send('GET', '/export', keyed(key))).status).toBe(200);
      // Writes that add no collection, index, webhook or bytes go on too.
      expect((await low.send('POST', '/data/d1', keyed(key), { item: { more: 1 } })).status).toBe(
        200,
      );

      // Growth is refused, with the new limit and the usage.
      expectRefusal(
        await low.send('POST', '/data/new', keyed(key), { item: {} }),
        409,
        'COLLECTION_QUOTA_EXCEEDED',
        { limit: 'collections', max: 1, usage: MAX_COLLECTIONS },
      );
      expectRefusal(
        await low.send('POST', '/data/d0/index', keyed(key), { field: 'z' }),
        409,
        'INDEX_QUOTA_EXCEEDED',
        { limit: 'indexesPerCollection', max: 1, usage: 2 },
      );
      // A collection under the new limit still gets its index.
      expect((await low.send('POST', '/data/d1/index', keyed(key), { field: 'z' })).status).toBe(
        200,
      );
      expectRefusal(
        await low.send('POST', '/webhooks', keyed(key), webhook(9)),
        409,
        'WEBHOOK_QUOTA_EXCEEDED',
        { limit: 'webhooks', max: 1, usage: WEBHOOK_MAX },
      );
      expectRefusal(await upload(low, key, 'more', 10), 409, 'FILE_QUOTA_EXCEEDED', {
        limit: 'fileBytes',
        max: 1000,
        usage: FILE_BYTES,
      });

      // Deletes go on; a place freed while still over the limit is not filled again.
      expect((await low.send('DELETE', '/data/d2', keyed(key))).status).toBe(204);
      expectRefusal(
        await low.send('POST', '/data/new', keyed(key), { item: {} }),
        409,
        'COLLECTION_QUOTA_EXCEEDED',
        { limit: 'collections', max: 1, usage: MAX_COLLECTIONS - 1 },
      );
      const dropped = await low.send(
        'DELETE',
        '/data/d0/index',
        { ...keyed(key), 'Content-Type': 'application/json' },
        new RawBody(Buffer.from(JSON.stringify({ name: 'x_1' }))),
      );
      expect(dropped.status).toBe(204);
      expectRefusal(
        await low.send('POST', '/data/d0/index', keyed(key), { field: 'z' }),
        409,
        'INDEX_QUOTA_EXCEEDED',
        { limit: 'indexesPerCollection', max: 1, usage: 1 },
      );
      const hooks = JSON.parse((await low.send('GET', '/webhooks', keyed(key))).body) as {
        id: string;
      }[];
      expect((await low.send('DELETE', `/webhooks/${hooks[0]!.id}`, keyed(key))).status).toBe(204);
      expectRefusal(
        await low.send('POST', '/webhooks', keyed(key), webhook(10)),
        409,
        'WEBHOOK_QUOTA_EXCEEDED',
        { limit: 'webhooks', max: 1, usage: WEBHOOK_MAX - 1 },
      );
      expect((await low.send('DELETE', `/files/${fileId}`, keyed(key))).status).toBe(204);
      expect((await upload(low, key, 'small', 10)).status).toBe(201);

      // The instances with the former limits let the tenant grow again up to them.
      expect((await a.send('POST', '/data/again', keyed(key), { item: {} })).status).toBe(200);
      expect((await b.send('POST', '/webhooks', keyed(key), webhook(11))).status).toBe(200);
    },
    2 * READY_WITHIN_MS,
  );
});
