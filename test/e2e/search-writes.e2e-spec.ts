import type { CommandStartedEvent, Document } from 'mongodb';
import { createTestApp, nativeCollection, type TestApp } from '../support/app';
import { createUser, type TestUser } from '../support/factories';
import { as } from '../support/http';
import { exportAs, importAs, resultsOf } from '../support/ndjson';
import { itemWords } from '../../src/data/search/tokenizer';
import { until } from '../support/until';

/**
 * Under a search configuration every write path stores the item's word list (`_words`) in the
 * same database write as the item, equal to the tokenizer's words of the body stored; an item
 * past SEARCH_MAX_WORDS_PER_ITEM is refused (413) with nothing written; the list never appears
 * in any output; and a write that does not touch a search field costs what it did before.
 */
let t: TestApp;
let user: TestUser;

/**
 * The commands only a write sends, while `recording`: any on the item's own collection (a tenant
 * collection, `d_…`) and the inserts of its intent and its event. The rest is left out: the
 * instance's background work reads the registry, the placements, the feed and the intents too (a
 * sweep, the feed's tail, a webhook delivery poll woken by the write's event) and deletes the
 * intents of a second's writes in one command, at whatever moment its timers fire.
 */
const commands: CommandStartedEvent[] = [];
let recording = false;
function isTheWrites(event: CommandStartedEvent): boolean {
  const collection: unknown = event.command[event.commandName];
  if (typeof collection !== 'string') return false;
  if (collection.startsWith('d_')) return true;
  return (
    (collection === 'event_intents' || collection === 'events') && event.commandName === 'insert'
  );
}

const MAX_WORDS = 20;
const FIELDS = ['title', 'body.text'];

beforeAll(async () => {
  t = await createTestApp(__filename, {
    // A configuration written to the registry is read by the next request.
    REGISTRY_CACHE_MS: '0',
    SEARCH_MAX_WORDS_PER_ITEM: String(MAX_WORDS),
    // The driver reports each command it sends: what the command counts read.
    METRICS_DATABASE_COMMANDS: 'true',
  });
  t.connection.getClient().on('commandStarted', (event: CommandStartedEvent) => {
    if (recording && isTheWrites(event)) commands.push(event);
  });
  user = await createUser(t);
});
afterAll(async () => t.close());

const api = () => as(t, user);

function registry() {
  return t.connection.collection('data_collections');
}

/** PUT /data/{c}/search on `fields`, then waits for its build (the collection holds no item). */
async function setSearch(collection: string, fields: string[] = FIELDS): Promise<void> {
  await api().put(`/data/${collection}/search`, { fields, minTokenLength: 2 }).expect(202);
  await until(`the search build of ${collection}`, async () => {
    const res = await api().get(`/data/${collection}/search`).expect(200);
    return (res.body as { state: string }).state === 'ready';
  });
}

/** A collection of its own, registered by a first item (deleted again), with search on `fields`. */
let counter = 0;
async function searchable(fields: string[] = FIELDS): Promise<string> {
  counter += 1;
  const name = `sw${counter}`;
  await api()
    .post(`/data/${name}`, { item: { _id: 'seed' } })
    .expect(200);
  await api().delete(`/data/${name}/_id/seed`).expect(204);
  await setSearch(name, fields);
  return name;
}

/** The collection's items as stored, by _id. */
async function stored(collection: string): Promise<Map<string, Document>> {
  const entry = await registry().findOne({ tenant: user.subject, name: collection });
  const docs = await nativeCollection(t, entry).find().toArray();
  return new Map(docs.map((doc) => [doc._id, doc as Document]));
}

/** Asserts every stored item's word list is the tokenizer's words of its stored body. */
async function expectExactWords(collection: string, fields: string[] = FIELDS): Promise<number> {
  const docs = await stored(collection);
  for (const doc of docs.values()) {
    const { _words: words, ...body } = doc;
    expect({ _id: doc._id, words }).toEqual({
      _id: doc._id,
      words: itemWords(body, { fields, minTokenLength: 2 }),
    });
  }
  return docs.size;
}

/** `count` distinct words of at least two letters. */
const manyWords = (count: number) =>
  Array.from({ length: count }, (_, i) => `w${String.fromCharCode(97 + (i % 26))}${i}`).join(' ');

describe('creates', () => {
  it('stores the words of POST, bulk and find-or-create items in the insert, and answers none', async () => {
    const c = await searchable();
    const one = await api()
      .post(`/data/${c}`, {
        item: { _id: 'a', title: 'Café CRÈME, déjà-vu!', body: { text: '東京 report 2024' } },
      })
      .expect(200);
    const bulk = await api()
      .post(`/data/${c}/bulk`, {
        items: [
          { _id: 'b', title: ['Red shoes', 'blue'], other: 'not searched' },
          { _id: 'c', body: [{ text: 'Ünïcödé ①' }, { text: 'x' }] },
        ],
      })
      .expect(200);
    expect(bulk.body.results.map((r: { status: number }) => r.status)).toEqual([200, 200]);
    const found = await api()
      .post(`/data/${c}`, {
        item: { _id: 'd', code: 'k1', title: 'Found or created' },
        uniqueField: 'code',
        onConflict: 'return',
      })
      .expect(200);
    expect(await expectExactWords(c)).toBe(4);
    expect((await stored(c)).get('a')?._words).toEqual(
      ['2024', 'cafe', 'creme', 'deja', 'report', 'vu', '京', '東'].sort(),
    );
    for (const answer of [one.body, found.body, (await api().get(`/data/${c}`)).body])
      expect(JSON.stringify(answer)).not.toContain('_words');
  });

  it('refuses an item past SEARCH_MAX_WORDS_PER_ITEM with 413, writing nothing; in bulk only that item', async () => {
    const c = await searchable();
    const refused = await api()
      .post(`/data/${c}`, { item: { _id: 'big', title: manyWords(MAX_WORDS + 1) } })
      .expect(413);
    expect(refused.body.code).toBe('TOO_MANY_WORDS');
    // At the cap: written.
    await api()
      .post(`/data/${c}`, { item: { _id: 'full', title: manyWords(MAX_WORDS) } })
      .expect(200);
    const bulk = await api()
      .post(`/data/${c}/bulk`, {
        items: [
          { _id: 'ok1', title: 'fine' },
          { _id: 'big2', body: { text: manyWords(MAX_WORDS + 5) } },
          { _id: 'ok2', title: 'fine too' },
        ],
      })
      .expect(200);
    // As a schema violation: that item's result, the others written.
    expect(bulk.body.results.map((r: { status: number }) => r.status)).toEqual([200, 413, 200]);
    expect(bulk.body.results[1].error.code).toBe('TOO_MANY_WORDS');
    expect([...(await stored(c)).keys()].sort()).toEqual(['full', 'ok1', 'ok2']);
    await expectExactWords(c);
  });
});

describe('updates', () => {
  it('keeps the words exact through PUT by id, by filter, PATCH array operations and multi updates', async () => {
    const c = await searchable();
    await api()
      .post(`/data/${c}/bulk`, {
        items: [
          { _id: 'a', title: 'first title', body: { text: 'alpha' }, tags: ['t'], n: 1 },
          { _id: 'b', title: 'second', body: { text: ['beta', 'gamma'] }, n: 1 },
          { _id: 'c', title: 'third', n: 2 },
        ],
      })
      .expect(200);
    // By id: a search field, a field holding one.
    await api()
      .put(`/data/${c}/_id/a`, { values: { title: 'Renamed Title' } })
      .expect(200);
    await api()
      .put(`/data/${c}/_id/c`, { values: { body: { text: 'zeta', more: 'eta' } } })
      .expect(200);
    expect((await stored(c)).get('c')?._words).toEqual(['third', 'zeta']);
    // By filter (one item).
    await api()
      .put(`/data/${c}`, { filter: { title: 'Renamed Title' }, values: { title: 'By filter' } })
      .expect(200);
    // PATCH: array operations on a search field, and on a path inside a field holding one.
    await api()
      .put(`/data/${c}/_id/a`, { values: { title: ['one'] } })
      .expect(200);
    await t
      .http()
      .patch(`/data/${c}/_id/b`)
      .set('X-Api-Key', user.apiKey)
      .send({ push: { field: 'body.text', value: 'Delta epsilon' } })
      .expect(200);
    expect((await stored(c)).get('b')?._words).toEqual([
      'beta',
      'delta',
      'epsilon',
      'gamma',
      'second',
    ]);
    const patched = await t
      .http()
      .patch(`/data/${c}/_id/a`)
      .set('X-Api-Key', user.apiKey)
      .send({ push: { field: 'title', value: 'Pushed Word' } })
      .expect(200);
    expect(JSON.stringify(patched.body)).not.toContain('_words');
    expect((await stored(c)).get('a')?._words).toEqual(['alpha', 'one', 'pushed', 'word']);
    // Multi: every matched item gets its own words.
    const multi = await api()
      .put(`/data/${c}`, {
        filter: { n: 1 },
        values: { body: { text: 'Shared Text' } },
        multi: true,
      })
      .expect(200);
    expect(multi.body).toMatchObject({ matched: 2, modified: 2 });
    // Not a search field: the words stay right.
    await api()
      .put(`/data/${c}`, { filter: { n: 2 }, values: { other: 'ignored words' }, multi: true })
      .expect(200);
    await api()
      .put(`/data/${c}/_id/c`, { values: { n: 3 } })
      .expect(200);
    expect(await expectExactWords(c)).toBe(3);
    expect((await stored(c)).get('b')?._words).toEqual(['second', 'shared', 'text']);
  });

  it('refuses an update past the word cap with 413 and leaves the item as it was', async () => {
    const c = await searchable();
    await api()
      .post(`/data/${c}/bulk`, {
        items: [
          { _id: 'a', title: ['small'], n: 1 },
          { _id: 'b', title: 'small too', n: 1 },
        ],
      })
      .expect(200);
    const before = await stored(c);
    const big = manyWords(MAX_WORDS + 1);
    for (const [method, path, body] of [
      ['put', `/data/${c}/_id/a`, { values: { title: big } }],
      ['put', `/data/${c}`, { filter: { n: 1 }, values: { body: { text: big } }, multi: true }],
      ['patch', `/data/${c}/_id/a`, { push: { field: 'title', value: big } }],
    ] as const) {
      const res = await t.http()[method](path).set('X-Api-Key', user.apiKey).send(body);
      expect({ path, status: res.status, code: res.body.code }).toEqual({
        path,
        status: 413,
        code: 'TOO_MANY_WORDS',
      });
    }
    expect(await stored(c)).toEqual(before);
  });

  it('costs an update that writes no search field no more commands than without search', async () => {
    const plain = `plain${++counter}`;
    const c = await searchable();
    for (const name of [plain, c])
      await api()
        .post(`/data/${name}`, { item: { _id: 'a', title: 'words here', n: 0 } })
        .expect(200);
    const countOf = async (name: string, values: Record<string, unknown>) => {
      commands.length = 0;
      recording = true;
      await api().put(`/data/${name}/_id/a`, { values }).expect(200);
      recording = false;
      return commands.length;
    };
    // Warm: the first write of a collection may read its entry or indexes.
    await countOf(plain, { n: 1 });
    await countOf(c, { n: 1 });
    const withoutSearch = await countOf(plain, { n: 2 });
    const withSearch = await countOf(c, { n: 2 });
    expect(withSearch).toBe(withoutSearch);
    // Writing a search field reads the item first: one command more.
    expect(await countOf(c, { title: 'new words' })).toBe(withoutSearch + 1);
    await expectExactWords(c);
  });
});

describe('import, export and events', () => {
  it('stores the words of imported inserts and upserts, refuses a line holding _words, and shows the list nowhere', async () => {
    const c = await searchable();
    const line = (item: Record<string, unknown>) => ({ type: 'item', collection: c, item });
    const inserted = resultsOf(
      await importAs(t, user, [
        line({ _id: 'i1', title: 'Imported One' }),
        line({ _id: 'i2', body: { text: 'Imported Two' } }),
        line({ _id: 'i3', title: 'x', _words: ['planted'] }),
        line({ _id: 'i4', title: 'y', nested: { _words: ['planted'] } }),
        line({ _id: 'i6', title: manyWords(MAX_WORDS + 1) }),
      ]),
    );
    expect(inserted.results.map((r) => [r.status, r.code])).toEqual([
      [201, undefined],
      [201, undefined],
      [400, 'VALIDATION_FAILED'],
      [400, 'VALIDATION_FAILED'],
      [413, 'TOO_MANY_WORDS'],
    ]);
    const upserted = resultsOf(
      await importAs(
        t,
        user,
        [
          line({ _id: 'i2', title: manyWords(MAX_WORDS + 1) }),
          line({ _id: 'i1', title: 'Replaced Words' }),
          line({ _id: 'i5', title: 'Upserted New' }),
        ],
        { mode: 'upsert' },
      ),
    );
    expect(upserted.results.map((r) => r.status)).toEqual([413, 200, 201]);
    // A dry run answers what the import would.
    const dry = resultsOf(
      await importAs(t, user, [line({ _id: 'i7', title: manyWords(MAX_WORDS + 1) })], {
        dryRun: 'true',
      }),
    );
    expect(dry.results.map((r) => [r.status, r.code])).toEqual([[413, 'TOO_MANY_WORDS']]);
    expect((await stored(c)).get('i2')?._words).toEqual(['imported', 'two']);
    expect(await expectExactWords(c)).toBe(3);
    expect((await stored(c)).get('i1')?._words).toEqual(['replaced', 'words']);
    const exported = await exportAs(t, user, { collections: c });
    expect(exported.status).toBe(200);
    expect(exported.text).toContain('Replaced Words');
    expect(exported.text).not.toContain('_words');
    const events = await api().get('/events?after=0&limit=500').expect(200);
    expect(JSON.stringify(events.body)).toContain('Replaced Words');
    expect(JSON.stringify(events.body)).not.toContain('_words');
  });
});
