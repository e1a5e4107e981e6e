import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createTeam, createUser, type TestUser } from '../support/factories';
import { as, type Client } from '../support/http';
import { exportAs, importAs, resultsOf, type Line } from '../support/ndjson';
import { expectInvalid, expectProblem } from '../support/problems';
import { startService, type ServiceProcess } from '../support/service-process';
import { until } from '../support/until';

/**
 * A collection's access rules through the API (docs/data.md, "Access rules"): read, put and set
 * back to the defaults by root and team keys, with If-Match on their ETag and one `updated`
 * event per change; written out on every new collection; carried by export and import; and a
 * tightening in force on a second instance within REGISTRY_CACHE_MS.
 */
const REGISTRY_CACHE_MS = 300;

let t: TestApp;
let user: TestUser;
let api: Client;

beforeAll(async () => {
  t = await createTestApp(__filename, {
    REGISTRY_CACHE_MS: String(REGISTRY_CACHE_MS),
    MAX_COLLECTIONS: '13',
    FILTER_MAX_CONDITIONS: '3',
    ACCESS_MAX_PROTECTED_FIELDS: '4',
  });
  user = await createUser(t);
  api = as(t, user);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

const DEFAULTS = {
  sub: { read: 'own', create: 'own', update: 'own', delete: 'own' },
  public: { read: 'none' },
  protectedFields: { sub: [], public: [] },
};

const CATALOGUE = {
  sub: { read: 'all', create: 'none', update: 'none', delete: 'none' },
  public: { read: { filter: { published: true } } },
  protectedFields: { sub: ['cost'], public: ['cost', 'supplier.note'] },
};

/** The collection's events in the feed, as `type` strings. */
async function eventTypes(client: Client, collection: string): Promise<string[]> {
  const res = await client.get('/events', { query: { collection, limit: '100' } }).expect(200);
  return (res.body as { events: { type: string; resource: string }[] }).events
    .filter((event) => event.resource === 'collection')
    .map((event) => event.type);
}

describe('GET, PUT and DELETE /data/{c}/access', () => {
  it('a new collection has the defaults written out; a put replaces them, a delete restores them, each change one updated event', async () => {
    await api.post('/data/shared', { item: { n: 1 } }).expect(200);
    const initial = await api.get('/data/shared/access').expect(200);
    expect(initial.body).toEqual({ ...DEFAULTS, changedAt: expect.any(String) });
    const initialTag = initial.headers.etag as string;
    expect(initialTag).toMatch(/^"access-[0-9a-f]{8}-\d+"$/);
    await api.get('/data/shared/access', { headers: { 'If-None-Match': initialTag } }).expect(304);

    const put = await api.put('/data/shared/access', { sub: { read: 'all' } }).expect(200);
    expect(put.body).toEqual({
      ...DEFAULTS,
      sub: { ...DEFAULTS.sub, read: 'all' },
      changedAt: expect.any(String),
    });
    expect(put.headers.etag).not.toBe(initialTag);
    const read = await api.get('/data/shared/access').expect(200);
    expect(read.body).toEqual(put.body);
    expect(read.headers.etag).toBe(put.headers.etag);

    await api.delete('/data/shared/access').expect(204);
    const reset = await api.get('/data/shared/access').expect(200);
    expect({ ...reset.body, changedAt: null }).toEqual({ ...DEFAULTS, changedAt: null });
    expect(reset.headers.etag).toBe(initialTag);
    expect(await eventTypes(api, 'shared')).toEqual(['created', 'updated', 'updated']);
  });

  it('a put creates the collection, within the quota, and is the whole document back', async () => {
    const res = await api.put('/data/catalogue/access', CATALOGUE).expect(200);
    expect(res.body).toEqual({ ...CATALOGUE, changedAt: expect.any(String) });
    const listed = await api.get('/data').expect(200);
    expect(JSON.stringify(listed.body)).toContain('"catalogue"');
    expect(await eventTypes(api, 'catalogue')).toEqual(['created', 'updated']);
  });

  it('a missing collection is 404 COLLECTION_NOT_FOUND for GET and DELETE, and 412 for a PUT with If-Match', async () => {
    expectProblem(await api.get('/data/nothing/access'), 404, 'COLLECTION_NOT_FOUND');
    expectProblem(await api.delete('/data/nothing/access'), 404, 'COLLECTION_NOT_FOUND');
    const res = await api.put('/data/nothing/access', DEFAULTS, { headers: { 'If-Match': '*' } });
    expectProblem(res, 412, 'PRECONDITION_FAILED');
    expect(res.headers.etag).toBeUndefined();
    expectProblem(await api.get('/data/nothing/access'), 404, 'COLLECTION_NOT_FOUND');
  });

  it('If-Match: the current tag or * goes ahead; a stale tag is 412 with the current tag, and changes nothing', async () => {
    const first = await api.put('/data/guarded/access', { sub: { read: 'all' } }).expect(200);
    const firstTag = first.headers.etag as string;
    const second = await api
      .put('/data/guarded/access', { sub: { read: 'none' } }, { headers: { 'If-Match': firstTag } })
      .expect(200);
    const stale = await api.put(
      '/data/guarded/access',
      { sub: { read: 'all' } },
      { headers: { 'If-Match': firstTag } },
    );
    expectProblem(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.headers.etag).toBe(second.headers.etag);
    const staleDelete = await api.delete('/data/guarded/access', undefined, {
      headers: { 'If-Match': firstTag },
    });
    expectProblem(staleDelete, 412, 'PRECONDITION_FAILED');
    expect((await api.get('/data/guarded/access').expect(200)).body.sub.read).toBe('none');

    await api.put('/data/guarded/access', CATALOGUE, { headers: { 'If-Match': '*' } }).expect(200);
    const current = (await api.get('/data/guarded/access').expect(200)).headers.etag as string;
    await api
      .delete('/data/guarded/access', undefined, { headers: { 'If-Match': current } })
      .expect(204);
    expect(await eventTypes(api, 'guarded')).toEqual([
      'created',
      'updated',
      'updated',
      'updated',
      'updated',
    ]);
  });

  it('of concurrent changes under one If-Match tag exactly one goes ahead, with one event', async () => {
    const start = await api.put('/data/contested/access', { sub: { read: 'all' } }).expect(200);
    const tag = start.headers.etag as string;
    const rules = ['none', 'own', { filter: { a: 1 } }, { filter: { b: 2 } }, { filter: { c: 3 } }];
    const replies = await Promise.all(
      rules.map((read) =>
        api.put('/data/contested/access', { sub: { read } }, { headers: { 'If-Match': tag } }),
      ),
    );
    const won = replies.filter((res) => res.status === 200);
    expect(replies.map((res) => res.status).sort()).toEqual([200, 412, 412, 412, 412]);
    const now = await api.get('/data/contested/access').expect(200);
    expect(now.body.sub.read).toEqual(won[0]?.body.sub.read);
    for (const lost of replies.filter((res) => res.status === 412))
      expect(lost.headers.etag).toBe(now.headers.etag);
    expect(await eventTypes(api, 'contested')).toEqual(['created', 'updated', 'updated']);
  });

  it('If-Match on an entry written before collections had rules: * is 412, the defaults tag goes ahead', async () => {
    await api.post('/data/legacy', { item: { n: 1 } }).expect(200);
    await t.connection
      .collection('data_collections')
      .updateOne({ tenant: user.subject, name: 'legacy' }, { $unset: { rules: 1 } });
    // As registered before collections had rules; the access routes read the entry afresh.
    const legacy = await api.get('/data/legacy/access').expect(200);
    expect(legacy.body).toEqual({ ...DEFAULTS, changedAt: null });
    const star = await api.put('/data/legacy/access', DEFAULTS, { headers: { 'If-Match': '*' } });
    expectProblem(star, 412, 'PRECONDITION_FAILED');
    expect(star.headers.etag).toBe(legacy.headers.etag);
    await api
      .put('/data/legacy/access', DEFAULTS, {
        headers: { 'If-Match': legacy.headers.etag as string },
      })
      .expect(200);
    expect((await api.get('/data/legacy/access').expect(200)).body.changedAt).toEqual(
      expect.any(String),
    );
  });

  it('refuses what readAccessRules refuses with 400 VALIDATION_FAILED naming each member, and changes nothing', async () => {
    await api.put('/data/checked/access', { sub: { read: 'all' } }).expect(200);
    const res = await api.put('/data/checked/access', {
      sub: { read: 'mine', update: { filter: { owner: '$caller.email' } } },
      public: { read: 'own' },
      protectedFields: { sub: ['_id', 'a..b'], public: 'cost' },
    });
    expectInvalid(
      res,
      'sub.read',
      'sub.update.filter.owner',
      'public.read',
      'protectedFields.sub[0]',
      'protectedFields.sub[1]',
      'protectedFields.public',
    );
    // The configured filter limits (FILTER_MAX_CONDITIONS=3 here) hold for a rule's filter.
    const tooMany = await api.put('/data/checked/access', {
      sub: { read: { filter: { a: 1, b: 2, c: 3, d: 4 } } },
    });
    expectProblem(tooMany, 400, 'VALIDATION_FAILED');
    // ACCESS_MAX_PROTECTED_FIELDS=4 here: four are taken, five are refused.
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `f${i}`);
    await api.put('/data/fields/access', { protectedFields: { public: fields(4) } }).expect(200);
    const tooManyFields = await api.put('/data/checked/access', {
      protectedFields: { sub: fields(5) },
    });
    expectInvalid(tooManyFields, 'protectedFields.sub');
    expectProblem(await api.put('/data/checked/access', { sub: null }), 400, 'VALIDATION_FAILED');
    // A member's null is not "left out" either.
    expectInvalid(await api.put('/data/checked/access', { public: { read: null } }), 'public.read');
    // A PUT without a body is not a PUT of the defaults (`{}` is): 400, whatever If-Match says.
    const bodiless = await t
      .http()
      .put('/data/checked/access')
      .set('X-Api-Key', user.apiKey)
      .set('If-Match', '"stale"');
    expectProblem(bodiless, 400, 'VALIDATION_FAILED');
    expectInvalid(
      await api.put('/data/checked/access', { protectedFields: { public: [''] } }),
      'protectedFields.public[0]',
    );
    expect((await api.get('/data/checked/access').expect(200)).body.sub.read).toBe('all');
    expect(await eventTypes(api, 'checked')).toEqual(['created', 'updated']);
  });

  it('sub keys may not read or change the rules (403); team keys may', async () => {
    await api.put('/data/subs/access', { sub: { read: 'all' } }).expect(200);
    const sub = as(t, await createSubKey(t, user));
    expectProblem(await sub.get('/data/subs/access'), 403, 'FORBIDDEN');
    expectProblem(await sub.put('/data/subs/access', DEFAULTS), 403, 'FORBIDDEN');
    expectProblem(await sub.delete('/data/subs/access'), 403, 'FORBIDDEN');
    expect((await api.get('/data/subs/access').expect(200)).body.sub.read).toBe('all');

    const team = await createTeam(t);
    const member = as(t, team.apiKey);
    await member.put('/data/team-rules/access', CATALOGUE).expect(200);
    expect((await member.get('/data/team-rules/access').expect(200)).body).toEqual({
      ...CATALOGUE,
      changedAt: expect.any(String),
    });
  });
});

describe('export and import', () => {
  it('carries each collection rules in the manifest: a fresh user importing it reads the same rules', async () => {
    await api.put('/data/products/access', CATALOGUE).expect(200);
    await api.post('/data/products', { item: { _id: 'p1', published: true, cost: 3 } }).expect(200);
    const exported = await exportAs(t, user, { collections: 'products' });
    expect(exported.status).toBe(200);
    const manifest = exported.lines[0] as { collections: Line[] };
    expect(manifest.collections[0]?.access).toEqual(CATALOGUE);

    const other = await createUser(t);
    const imported = await importAs(t, other, exported.text);
    expect(imported.status).toBe(200);
    expect(resultsOf(imported).totals).toMatchObject({ failed: 0 });
    const original = await api.get('/data/products/access').expect(200);
    const copy = await as(t, other).get('/data/products/access').expect(200);
    expect(copy.body).toEqual({ ...original.body, changedAt: expect.any(String) });
    expect(copy.headers.etag).toBe(original.headers.etag);
  });

  it('an older manifest without rules leaves a new collection the defaults; rules it cannot have are a 400', async () => {
    const other = await createUser(t);
    const manifest = { type: 'manifest', format: 1, collections: [{ name: 'old', indexes: [] }] };
    const item = { type: 'item', collection: 'old', item: { _id: 'a', n: 1 } };
    const imported = await importAs(t, other, [manifest, item]);
    expect(imported.status).toBe(200);
    const rules = await as(t, other).get('/data/old/access').expect(200);
    expect(rules.body).toEqual({ ...DEFAULTS, changedAt: expect.any(String) });

    const bad = resultsOf(
      await importAs(t, other, [
        { ...manifest, collections: [{ name: 'old2', access: { sub: { read: 'mine' } } }] },
      ]),
    );
    expect(bad.results[0]).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(JSON.stringify(bad.results[0])).toContain('sub.read');
    expectProblem(await as(t, other).get('/data/old2/access'), 404, 'COLLECTION_NOT_FOUND');
    // Explicit null is a value, not "no rules": refused as rules it cannot have.
    const nulled = resultsOf(
      await importAs(t, other, [{ ...manifest, collections: [{ name: 'old3', access: null }] }]),
    );
    expect(nulled.results[0]).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it("a sub key's manifest may name only the rules the collection has (the defaults when it has none)", async () => {
    await api.put('/data/held/access', CATALOGUE).expect(200);
    const sub = await createSubKey(t, user);
    const manifest = (name: string, access: object) => ({
      type: 'manifest',
      format: 1,
      collections: [{ name, indexes: [], access }],
    });
    const same = resultsOf(await importAs(t, sub, [manifest('held', CATALOGUE)]));
    expect(same.results[0]).toMatchObject({ status: 200 });
    const other = resultsOf(await importAs(t, sub, [manifest('held', DEFAULTS)]));
    expect(other.results[0]).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    const fresh = resultsOf(await importAs(t, sub, [manifest('fresh', DEFAULTS)]));
    expect(fresh.results[0]).toMatchObject({ status: 200 });
    expect((await api.get('/data/held/access').expect(200)).body).toMatchObject(CATALOGUE);
  });
});

describe('two instances on one database', () => {
  let second: ServiceProcess;

  beforeAll(async () => {
    second = await startService({
      MONGODB_DB_NAME: t.config.database.dbName,
      REGISTRY_CACHE_MS: String(REGISTRY_CACHE_MS),
    });
  }, 60_000);
  afterAll(async () => {
    await second?.kill();
  });

  it(`a tightened read rule refuses the old reads on both instances within REGISTRY_CACHE_MS`, async () => {
    await api.put('/data/tight/access', { sub: { read: 'all' } }).expect(200);
    await api.post('/data/tight', { item: { _id: 'shared', userId: 'someone-else' } }).expect(200);
    const sub = await createSubKey(t, user);
    const key = { 'X-Api-Key': sub.apiKey };
    const readOn2 = () => second.send('GET', '/data/tight/_id/shared', key);
    // Read through instance 2, which now holds the entry (read: all) in its cache.
    expect((await readOn2()).status).toBe(200);

    await api.put('/data/tight/access', { sub: { read: 'own' } }).expect(200);
    // The instance that made the change enforces it at once.
    expectProblem(await as(t, sub).get('/data/tight/_id/shared'), 404, 'ITEM_NOT_FOUND');
    await until(
      'instance 2 refuses the read',
      async () => (await readOn2()).status === 404,
      REGISTRY_CACHE_MS + 2_000,
    );
    const refused = await readOn2();
    expect({ status: refused.status, code: JSON.parse(refused.body).code }).toEqual({
      status: 404,
      code: 'ITEM_NOT_FOUND',
    });
  });
});
