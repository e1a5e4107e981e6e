import type { Document } from 'mongodb';
import { createTestApp, nativeCollection, testDatabaseUri, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { as, type Client } from '../support/http';
import { expectInvalid, expectProblem } from '../support/problems';
import { startService, type ServiceProcess } from '../support/service-process';
import { until } from '../support/until';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';
import { itemWords } from '../../src/data/search/tokenizer';

/**
 * A collection's search configuration (docs/data.md, "Search"): PUT, GET and DELETE by root and
 * team keys with If-Match, the `search_words` index in the collection's index quota, protected
 * fields refused both ways, and the build of the word lists of the items stored before: every
 * item's stored words equal to the tokenizer's, a newer configuration superseding a build, a
 * failed build, and a build whose holder is SIGKILLed finished by another instance.
 */
const REGISTRY_CACHE_MS = 100;
const ENV = {
  REGISTRY_CACHE_MS: String(REGISTRY_CACHE_MS),
  SEARCH_BUILD_BATCH: '3',
  SEARCH_BUILD_LEASE_MS: '1000',
  LIFECYCLE_POLL_MS: '100',
  MAX_INDEXES: '2',
  SEARCH_MAX_FIELDS: '3',
  LOG_LEVEL: 'error',
};

let t: TestApp;
let user: TestUser;
let api: Client;

beforeAll(async () => {
  t = await createTestApp(__filename, ENV);
  user = await createUser(t);
  api = as(t, user);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

interface SearchBody {
  fields: string[];
  minTokenLength: number;
  state: string;
  indexed: number;
  total: number;
  version: number;
  failure?: { code: string; detail: string };
}

const NOTES = [
  { _id: 'n01', title: 'Red Shoes', body: 'Très élégantes, taille 42' },
  { _id: 'n02', title: 'Invoice #7', body: { text: 'paid in full', tags: ['Finance', 'Q4'] } },
  { _id: 'n03', title: '東京 trip', body: 'ｆｕｌｌ-width ① and ﬁne print' },
  { _id: 'n04', title: 'a b c', body: null },
  { _id: 'n05', title: ['list', 'of', 'Titles'], body: 'Über straße' },
  { _id: 'n06', body: 'no title at all 🎉 emoji' },
  { _id: 'n07', title: 'Seven', body: 'another note' },
];

async function nativeOf(name: string) {
  const entry = await t.connection
    .collection('data_collections')
    .findOne({ tenant: user.subject, name });
  return nativeCollection(t, entry);
}

/** The stored items of a collection, with their hidden word lists, read past the service. */
async function stored(name: string): Promise<Document[]> {
  return (await nativeOf(name)).find({}).sort({ _id: 1 }).toArray();
}

/** Every stored item's word list is the tokenizer's for its body under these rules. */
async function expectExactWords(
  name: string,
  rules: { fields: string[]; minTokenLength: number },
): Promise<void> {
  const items = await stored(name);
  expect(items.length).toBeGreaterThan(0);
  for (const item of items)
    expect({ _id: item._id, words: item._words }).toEqual({
      _id: item._id,
      words: itemWords(item, rules),
    });
}

async function search(name: string): Promise<SearchBody> {
  return (await api.get(`/data/${name}/search`).expect(200)).body as SearchBody;
}

async function readyOf(name: string, version: number, within = 15_000): Promise<SearchBody> {
  await until(
    `${name} ready at version ${version}`,
    async () => {
      const now = await search(name);
      return now.version === version && now.state === 'ready';
    },
    within,
  );
  return search(name);
}

async function seed(name: string, items: readonly Document[] = NOTES): Promise<void> {
  await api.post(`/data/${name}/bulk`, { items }).expect(200);
}

describe('PUT, GET and DELETE /data/{c}/search', () => {
  it('refuses a bad configuration, naming each wrong member', async () => {
    expectInvalid(await api.put('/data/bad/search', {}), 'fields');
    expectInvalid(await api.put('/data/bad/search', { fields: [] }), 'fields');
    expectInvalid(await api.put('/data/bad/search', { fields: ['a', 'b', 'c', 'd'] }), 'fields');
    expectInvalid(
      await api.put('/data/bad/search', { fields: ['_id', 'a', 'a'], minTokenLength: 0 }),
      'fields[0]',
      'fields[2]',
      'minTokenLength',
    );
    expectInvalid(
      await api.put('/data/bad/search', { fields: ['_createdAt', 'x._words'] }),
      'fields[0]',
      'fields[1]',
    );
    expectInvalid(await api.put('/data/bad/search', { fields: ['a'], extra: 1 }), 'extra');
    expectInvalid(await api.put('/data/bad/search', { fields: ['a'], minTokenLength: null }));
    expectInvalid(await api.put('/data/bad/search', { fields: ['a'], minTokenLength: 33 }));
    expect((await api.get('/data').expect(200)).body).not.toContainEqual(
      expect.objectContaining({ name: 'bad' }),
    );
  });

  it('builds the words of the items stored before: ready with indexed == total, every list exact', async () => {
    await seed('notes');
    expectProblem(await api.get('/data/notes/search'), 404, 'SEARCH_NOT_FOUND');
    const put = await api
      .put('/data/notes/search', { fields: ['title', 'body'], minTokenLength: 2 })
      .expect(202);
    expect(put.body).toEqual({ state: 'building', version: 1 });
    expect(put.headers.etag).toBe('"search-1"');
    const building = await search('notes');
    expect(building).toMatchObject({ state: 'building', version: 1, total: NOTES.length });

    const ready = await readyOf('notes', 1);
    expect(ready).toEqual({
      fields: ['title', 'body'],
      minTokenLength: 2,
      state: 'ready',
      indexed: NOTES.length,
      total: NOTES.length,
      version: 1,
    });
    await expectExactWords('notes', { fields: ['title', 'body'], minTokenLength: 2 });
    // The words are hidden, and the items' ETags did not change for them.
    const item = await api.get('/data/notes/_id/n01').expect(200);
    expect(item.body).not.toHaveProperty('_words');
  });

  it('lists the search_words index and refuses to drop it through the index routes', async () => {
    await api.put('/data/indexed/search', { fields: ['title'] }).expect(202);
    const indexes = (await api.get('/data/indexed/index').expect(200)).body as { name: string }[];
    expect(indexes.map((i) => i.name)).toContain('search_words');
    const refused = await api.delete('/data/indexed/index', { name: 'search_words' });
    expectProblem(refused, 400, 'PROTECTED_INDEX');
    expect(refused.body).toMatchObject({ detail: expect.stringContaining('/search') });
  });

  it('takes an index slot: 409 INDEX_QUOTA_EXCEEDED when none is free, a second PUT keeps its slot', async () => {
    await api.post('/data/slots/index', { field: 'a' }).expect(200);
    await api.post('/data/slots/index', { field: 'b' }).expect(200);
    expectProblem(
      await api.put('/data/slots/search', { fields: ['title'] }),
      409,
      'INDEX_QUOTA_EXCEEDED',
    );
    expectProblem(await api.get('/data/slots/search'), 404, 'SEARCH_NOT_FOUND');

    await api.post('/data/kept/index', { field: 'a' }).expect(200);
    await api.put('/data/kept/search', { fields: ['title'] }).expect(202);
    expectProblem(await api.post('/data/kept/index', { field: 'b' }), 409, 'INDEX_QUOTA_EXCEEDED');
    const again = await api.put('/data/kept/search', { fields: ['body'] }).expect(202);
    expect(again.body).toEqual({ state: 'building', version: 2 });
    // DELETE gives the slot back.
    await api.delete('/data/kept/search').expect(204);
    await api.post('/data/kept/index', { field: 'b' }).expect(200);
  });

  it('checks If-Match on PUT and DELETE (412 with the current tag)', async () => {
    const first = await api.put('/data/matched/search', { fields: ['title'] }).expect(202);
    const stale = await api.put(
      '/data/matched/search',
      { fields: ['body'] },
      {
        headers: { 'If-Match': '"search-9"' },
      },
    );
    expectProblem(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.headers.etag).toBe(first.headers.etag);
    const next = await api
      .put('/data/matched/search', { fields: ['body'] }, { headers: { 'If-Match': '"search-1"' } })
      .expect(202);
    expect(next.headers.etag).toBe('"search-2"');
    expect((await api.get('/data/matched/search').expect(200)).headers.etag).toBe('"search-2"');
    expectProblem(
      await api.delete('/data/matched/search', undefined, {
        headers: { 'If-Match': '"search-1"' },
      }),
      412,
      'PRECONDITION_FAILED',
    );
    await api
      .delete('/data/matched/search', undefined, { headers: { 'If-Match': '"search-2"' } })
      .expect(204);
    expectProblem(await api.delete('/data/matched/search'), 404, 'SEARCH_NOT_FOUND');
    // No configuration: `If-Match: *` does not hold.
    expectProblem(
      await api.put('/data/matched/search', { fields: ['a'] }, { headers: { 'If-Match': '*' } }),
      412,
      'PRECONDITION_FAILED',
    );
  });

  it('refuses sub keys', async () => {
    const sub = await createSubKey(t, user);
    await api.post('/data/subs', { item: { title: 'x' } }).expect(200);
    expectProblem(
      await as(t, sub).put('/data/subs/search', { fields: ['title'] }),
      403,
      'FORBIDDEN',
    );
    expectProblem(await as(t, sub).get('/data/subs/search'), 403, 'FORBIDDEN');
    expectProblem(await as(t, sub).delete('/data/subs/search'), 403, 'FORBIDDEN');
  });

  it('refuses a protected search field, and protecting a search field (400 PROTECTED_FIELD)', async () => {
    await api.put('/data/guarded/access', { protectedFields: { public: ['secret'] } }).expect(200);
    expectProblem(
      await api.put('/data/guarded/search', { fields: ['title', 'secret.note'] }),
      400,
      'PROTECTED_FIELD',
    );
    await api.put('/data/guarded/search', { fields: ['title'] }).expect(202);
    expectProblem(
      await api.put('/data/guarded/access', { protectedFields: { sub: ['title.main'] } }),
      400,
      'PROTECTED_FIELD',
    );
    await api.put('/data/guarded/access', { protectedFields: { sub: ['cost'] } }).expect(200);
  });

  it('a newer configuration supersedes a build under way; DELETE removes the words', async () => {
    await seed('superseded');
    await api.put('/data/superseded/search', { fields: ['title'] }).expect(202);
    await api.put('/data/superseded/search', { fields: ['body'], minTokenLength: 3 }).expect(202);
    const ready = await readyOf('superseded', 2);
    expect(ready).toMatchObject({ fields: ['body'], minTokenLength: 3, indexed: NOTES.length });
    await expectExactWords('superseded', { fields: ['body'], minTokenLength: 3 });

    await api.delete('/data/superseded/search').expect(204);
    expectProblem(await api.get('/data/superseded/search'), 404, 'SEARCH_NOT_FOUND');
    const indexes = (await api.get('/data/superseded/index').expect(200)).body as {
      name: string;
    }[];
    expect(indexes.map((i) => i.name)).not.toContain('search_words');
    await until('no item keeps words', async () =>
      (await stored('superseded')).every((item) => !('_words' in item)),
    );
    // A new configuration counts on from the last one.
    const again = await api.put('/data/superseded/search', { fields: ['title'] }).expect(202);
    expect(again.body).toEqual({ state: 'building', version: 3 });
    await readyOf('superseded', 3);
    await expectExactWords('superseded', { fields: ['title'], minTokenLength: 2 });
  });
});

describe('builds on other instances', () => {
  const key = () => ({ 'X-Api-Key': user.apiKey });
  let other: ServiceProcess | undefined;
  let proxy: WireProxy | undefined;
  afterAll(async () => {
    await other?.kill();
    await proxy?.close();
  });

  it('fails a build on an item over SEARCH_MAX_WORDS_PER_ITEM, naming it; a later PUT starts over', async () => {
    await seed('wordy', [
      { _id: 'w1', text: 'one two' },
      { _id: 'w2', text: 'alpha beta gamma delta epsilon' },
    ]);
    other = await startService({
      ...ENV,
      MONGODB_DB_NAME: t.config.database.dbName,
      SEARCH_MAX_WORDS_PER_ITEM: '3',
    });
    const put = await other.send('PUT', '/data/wordy/search', key(), { fields: ['text'] });
    expect(put.status).toBe(202);
    await until('the build failed', async () => (await search('wordy')).state === 'failed');
    expect(await search('wordy')).toMatchObject({
      version: 1,
      failure: { code: 'TOO_MANY_WORDS', detail: expect.stringContaining("'w2'") },
    });
    // The instance without that low limit builds the next version.
    await other.kill();
    other = undefined;
    await api.put('/data/wordy/search', { fields: ['text'] }).expect(202);
    const ready = await readyOf('wordy', 2);
    expect(ready).not.toHaveProperty('failure');
    await expectExactWords('wordy', { fields: ['text'], minTokenLength: 2 });
  }, 60_000);

  it('a build whose one write outlasts its lease keeps the lease: no other holder starts the same walk', async () => {
    await seed('slow', NOTES.slice(0, 4));
    const entry = await t.connection
      .collection('data_collections')
      .findOne({ tenant: user.subject, name: 'slow' });
    const physical = entry?.physical as string;
    proxy = await startWireProxy(testDatabaseUri());
    // Both this instance and the test's app look for abandoned runs every 100 ms.
    other = await startService({
      ...ENV,
      MONGODB_DB_NAME: t.config.database.dbName,
      MONGODB_URI: proxy.uri,
      SEARCH_BUILD_LEASE_MS: '600',
    });
    // The build's first word write hangs (a slow database) for three leases and more.
    proxy.hold(
      (command) =>
        command.update === physical &&
        Object.keys((command.updates as Document[] | undefined)?.[0]?.u?.$set ?? {}).join() ===
          '_words',
    );
    const put = await other.send('PUT', '/data/slow/search', key(), { fields: ['title'] });
    expect(put.status).toBe(202);
    await until('the first word write is held', () => proxy?.held() === 1, 15_000);
    const heldAt = Date.now();
    const record = () => t.connection.collection('data_search_runs').findOne({ name: 'slow' });
    await until(
      'the lease renewed past three leases while the write hangs',
      async () => ((await record())?.leaseUntil as Date).getTime() > heldAt + 1_800,
      15_000,
    );
    // Still the first holder's: no poll found it abandoned.
    expect(await record()).toMatchObject({ status: 'running', runs: 1 });
    proxy.release();
    await readyOf('slow', 1);
    await expectExactWords('slow', { fields: ['title'], minTokenLength: 2 });
    expect(await record()).toMatchObject({ status: 'done', runs: 1 });
    await other.kill();
    other = undefined;
    await proxy.close();
    proxy = undefined;
  }, 60_000);

  it('a build whose holder is SIGKILLed after its first batch is finished by another instance', async () => {
    const items = Array.from({ length: 10 }, (_, i) => ({
      _id: `k${String(i).padStart(2, '0')}`,
      title: `Item number ${i} of the killed build`,
    }));
    await seed('killed', items);
    proxy = await startWireProxy(testDatabaseUri());
    other = await startService({
      ...ENV,
      MONGODB_DB_NAME: t.config.database.dbName,
      MONGODB_URI: proxy.uri,
      // This instance alone polls rarely: the build is taken over by the test's app.
      LIFECYCLE_POLL_MS: '600000',
      // Taken over once this has run out after the last batch recorded: long after the kill.
      SEARCH_BUILD_LEASE_MS: '3000',
    });
    // The first batch is recorded; the second batch's record is held, and there it dies.
    let batches = 0;
    proxy.hold(
      (command) =>
        command.update === 'data_search_runs' &&
        (command.updates as Document[] | undefined)?.[0]?.u?.$set?.lastId !== undefined &&
        ++batches > 1,
    );
    const put = await other.send('PUT', '/data/killed/search', key(), { fields: ['title'] });
    expect(put.status).toBe(202);
    await until('the second batch record is held', () => proxy?.held() === 1, 15_000);
    await other.kill();
    other = undefined;

    const run = await t.connection.collection('data_search_runs').findOne({ name: 'killed' });
    expect(run).toMatchObject({ status: 'running', indexed: 3, lastId: 'k02', runs: 1 });
    const before = await stored('killed');
    // Two batches written, the rest not yet.
    expect(before.filter((item) => '_words' in item).map((item) => item._id)).toEqual([
      'k00',
      'k01',
      'k02',
      'k03',
      'k04',
      'k05',
    ]);

    const ready = await readyOf('killed', 1);
    expect(ready).toMatchObject({ indexed: items.length, total: items.length });
    await expectExactWords('killed', { fields: ['title'], minTokenLength: 2 });
    const after = await t.connection.collection('data_search_runs').findOne({ name: 'killed' });
    expect(after).toMatchObject({ status: 'done', indexed: items.length, runs: 2 });
  }, 60_000);
});
