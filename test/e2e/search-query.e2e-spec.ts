import fc from 'fast-check';
import { createTestApp, type TestApp } from '../support/app';
import { mongoOnly } from '../support/database-server';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { as, type Client } from '../support/http';
import { collectPages, ids, linkTarget } from '../support/paging';
import { until } from '../support/until';
import { WORDS_FIELD } from '../../src/data/query/data.constants';
import { WORDS_INDEX, type SearchState } from '../../src/data/search/search-rule';
import { itemWords, queryWords, wordsMatch, type WordRules } from '../../src/data/search/tokenizer';

/**
 * `q` on lists, counts and explains against the real database: hand-written expectations that
 * do not use the tokenizer, the refusals, and a model test (fast-check) whose reference is the
 * in-memory tokenizer: what it checks independently is the database filter on the word lists,
 * the keyset paging with it and the hidden field.
 */
let t: TestApp;
let user: TestUser;
let api: Client;

const RULE: WordRules = { fields: ['title', 'body'], minTokenLength: 2 };

beforeAll(async () => {
  // No registry cache: a configuration written to the entry is seen by the next request.
  t = await createTestApp(__filename, { REGISTRY_CACHE_MS: '0' });
  user = await createUser(t);
  api = as(t, user);
});
afterAll(async () => t.close());

/** PUT /data/{c}/search, then waits for the build to make every item's word list. */
async function configureSearch(collection: string, rule: WordRules): Promise<void> {
  const { fields, minTokenLength } = rule;
  await api.put(`/data/${collection}/search`, { fields, minTokenLength }).expect(202);
  await until(`the search build of ${collection}`, async () => {
    const res = await api.get(`/data/${collection}/search`).expect(200);
    return (res.body as { state: SearchState }).state === 'ready';
  });
}

/**
 * A configuration whose build has not ended: stored on the registry entry as PUT stores it, but
 * with no build run behind it, so it stays in `state` for as long as the test needs.
 */
async function holdState(collection: string, rule: WordRules, state: SearchState): Promise<void> {
  const { fields, minTokenLength } = rule;
  const result = await t.connection.collection('data_collections').updateOne(
    { tenant: user.subject, name: collection },
    {
      $set: {
        'rules.search': { fields, minTokenLength, version: 1, state, changedAt: new Date() },
      },
    },
  );
  expect(result.matchedCount).toBe(1);
}

async function bulk(collection: string, items: Record<string, unknown>[]): Promise<void> {
  const res = await api.post(`/data/${collection}/bulk`, { items }).expect(200);
  expect(res.body).toMatchObject({ created: items.length, failed: 0 });
}

const list = (collection: string, query: Record<string, string>) =>
  api.get(`/data/${collection}`, { query });
const listIds = async (collection: string, query: Record<string, string>) => {
  const res = await list(collection, query);
  expect([200, 204]).toContain(res.status);
  return res.status === 204 ? [] : ids(res, '_id').sort();
};
const count = async (collection: string, query: Record<string, string>) => {
  const res = await api.get(`/data/${collection}/count`, { query }).expect(200);
  return (res.body as { count: number }).count;
};

describe('q on lists and counts', () => {
  let sub: Awaited<ReturnType<typeof createSubKey>>;

  beforeAll(async () => {
    sub = await createSubKey(t, user);
    await bulk('notes', [
      { _id: 'n1', title: 'Crème brûlée', body: 'Red shoes for sale!', rank: 1 },
      { _id: 'n2', title: '東京タワー', body: 'tall tower', rank: 2 },
      { _id: 'n3', title: 'Blue SHOES', body: ['size 42', 'wide'], q: 'literal', rank: 1 },
      { _id: 'n4', title: 'hoedown', tag: 'red shoes', rank: 3 },
      { _id: 'n5', title: 'Shopping list', body: 'eggs, milk', rank: 2 },
    ]);
    await as(t, sub)
      .post('/data/notes', { item: { _id: 'n6', title: 'my own shoes', rank: 0 } })
      .expect(200);
    await bulk('plain', [{ title: 'shoes' }]);
    await configureSearch('notes', RULE);
  });

  it('finds whole words and the last one as a prefix, folding case and accents, never inside a word', async () => {
    expect(await listIds('notes', { q: 'creme' })).toEqual(['n1']);
    expect(await listIds('notes', { q: 'CRÈME Brulee' })).toEqual(['n1']);
    expect(await listIds('notes', { q: '東京' })).toEqual(['n2']);
    expect(await listIds('notes', { q: 'tower 東' })).toEqual(['n2']);
    expect(await listIds('notes', { q: 'sho' })).toEqual(['n1', 'n3', 'n5', 'n6']);
    // "hoe" is inside "shoes", not its start: only "hoedown" answers.
    expect(await listIds('notes', { q: 'hoe' })).toEqual(['n4']);
    // "red shoes" in `tag` is no search field's.
    expect(await listIds('notes', { q: 'red sho' })).toEqual(['n1']);
    // Array elements are searched; a number in the text is a word.
    expect(await listIds('notes', { q: '42 wid' })).toEqual(['n3']);
    expect(await listIds('notes', { q: 'zzzq' })).toEqual([]);
  });

  it('matches every item when q holds no word', async () => {
    const every = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'];
    expect(await listIds('notes', { q: '!!' })).toEqual(every);
    expect(await listIds('notes', { q: '' })).toEqual(every);
    expect(await count('notes', { q: '!! ' })).toBe(6);
  });

  it('is ANDed with filters and the caller read rule, and counts the same', async () => {
    expect(await listIds('notes', { q: 'sho', 'rank[gte]': '2' })).toEqual(['n5']);
    expect(await count('notes', { q: 'sho', 'rank[gte]': '2' })).toBe(1);
    expect(await count('notes', { q: 'sho' })).toBe(4);
    expect(await count('notes', { q: 'hoe' })).toBe(1);
    const own = await as(t, sub)
      .get('/data/notes', { query: { q: 'sho' } })
      .expect(200);
    expect(ids(own, '_id')).toEqual(['n6']);
    const owned = await as(t, sub)
      .get('/data/notes/count', { query: { q: 'sho' } })
      .expect(200);
    expect(owned.body).toEqual({ count: 1 });
  });

  it('pages with a sort and projection as a list without q, the Link keeping q', async () => {
    const first = await list('notes', { q: 'sho', sort: 'rank', sortOrder: 'asc', limit: '1' });
    expect(first.status).toBe(200);
    expect(linkTarget(first)).toMatch(/[?&]q=sho(&|$)/);
    const pages = await collectPages(
      api,
      '/data/notes?q=sho&sort=rank&sortOrder=asc&limit=1&fields=title',
    );
    const seen = pages.flatMap((page) => page.body as Record<string, unknown>[]);
    // rank 0 (n6), rank 1 (n1, n3: ties in _id order), then rank 2 (n5).
    expect(seen.map((item) => item._id)).toEqual(['n6', 'n1', 'n3', 'n5']);
    for (const item of seen) expect(Object.keys(item).sort()).toEqual(['_id', 'title']);
  });

  it('never answers the hidden word list', async () => {
    const res = await list('notes', { q: 'sho' }).expect(200);
    for (const item of res.body as Record<string, unknown>[]) {
      expect(item).not.toHaveProperty(WORDS_FIELD);
      expect(item.title).toEqual(expect.any(String));
    }
  });

  it('is a reserved parameter: a field named q is filtered with filter[q]', async () => {
    expect(await listIds('notes', { 'filter[q]': 'literal' })).toEqual(['n3']);
    expect(await listIds('notes', { 'filter[q][eq]': 'literal' })).toEqual(['n3']);
    expect(await listIds('notes', { q: 'literal' })).toEqual([]);
    expect(await count('notes', { 'filter[q]': 'literal' })).toBe(1);
  });

  it('refuses too many or too long words, and q given twice, naming q', async () => {
    for (const q of ['a1 b2 c3 d4 e5 f6 g7 h8 i9', `${'x'.repeat(33)}`]) {
      for (const path of ['/data/notes', '/data/notes/count', '/data/notes/explain']) {
        const res = await api.get(path, { query: { q } }).expect(400);
        expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'q' }] });
      }
    }
    // Eight words are allowed.
    await api.get('/data/notes/count', { query: { q: 'a1 b2 c3 d4 e5 f6 g7 h8' } }).expect(200);
    const twice = await api.get('/data/notes?q=red&q=shoes').expect(400);
    expect(twice.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'q' }] });
  });

  it('answers 400 SEARCH_NOT_CONFIGURED without a configuration, and a missing collection as ever', async () => {
    for (const path of ['/data/plain', '/data/plain/count', '/data/plain/explain']) {
      const res = await api.get(path, { query: { q: 'shoes' } }).expect(400);
      expect(res.body).toMatchObject({ code: 'SEARCH_NOT_CONFIGURED' });
    }
    // Without q, `plain` lists as before.
    await list('plain', {}).expect(200);
    await list('missing', { q: 'a1 b2 c3 d4 e5 f6 g7 h8 i9' }).expect(204);
    expect(await count('missing', { q: 'shoes' })).toBe(0);
  });

  it('answers 409 while the configuration is built (Retry-After) and after its build failed', async () => {
    await bulk('building', [{ title: 'shoes' }]);
    await holdState('building', RULE, 'building');
    for (const path of ['/data/building', '/data/building/count', '/data/building/explain']) {
      const res = await api.get(path, { query: { q: 'shoes' } }).expect(409);
      expect(res.body).toMatchObject({ code: 'SEARCH_BUILDING' });
      // REGISTRY_CACHE_MS=0 here: the least wait, one second.
      expect(res.headers['retry-after']).toBe('1');
    }
    await holdState('building', RULE, 'failed');
    const failed = await list('building', { q: 'shoes' }).expect(409);
    expect(failed.body).toMatchObject({ code: 'SEARCH_FAILED' });
    // Lists without q are not concerned.
    await list('building', {}).expect(200);
  });

  it('is refused by live queries, which do not search', async () => {
    const res = await api
      .get('/events/stream', { query: { collection: 'notes', 'filter[rank]': '1', q: 'sho' } })
      .expect(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'q' }] });
  });
});

describe('the search model', () => {
  const COLLECTION = 'corpus';
  const CORPUS_SIZE = 40;
  /** Words in mixed case, with accents, compatibility forms, digits, CJK, and emoji between. */
  const VOCABULARY = [
    'Crème',
    'creme',
    'CRÈME',
    'brûlée',
    'naïve',
    'Naive',
    'shoes',
    'Shoe',
    'SHOPPING',
    'shop',
    'red',
    'Rød',
    'tower',
    'Tower2',
    '東京',
    'タワー',
    '北京',
    '서울',
    'café',
    'CAFE',
    'x',
    'a1',
    '42',
    '420',
    'ﬁne',
    'ｆｕｌｌ',
    'Ärger',
    'ärgern',
    'déjà',
    'ΣΟΦΙΑ',
    'σοφία',
    'straße',
  ];
  const SEPARATORS = [' ', ', ', '—', '!', '🎉', '/', '\n', '.', "'", '😀', '-', '（', '…'];

  const text = fc
    .array(fc.tuple(fc.constantFrom(...VOCABULARY), fc.constantFrom(...SEPARATORS)), {
      minLength: 0,
      maxLength: 5,
    })
    .map((parts) => parts.map(([word, separator]) => word + separator).join(''));
  const item = fc.record(
    {
      title: text,
      body: fc.oneof(text, fc.array(text, { maxLength: 3 }), fc.integer({ min: 0, max: 500 })),
      tag: text,
      rank: fc.integer({ min: 0, max: 3 }),
    },
    { requiredKeys: ['rank'] },
  );
  const corpus: Record<string, unknown>[] = fc
    .sample(item, { numRuns: CORPUS_SIZE, seed: 49 })
    .map((fields, i) => ({ _id: `i${String(i).padStart(2, '0')}`, ...fields }));

  /** The words of an item's search fields as written (before any folding). */
  const surfaceWords = (doc: Record<string, unknown>): string[] =>
    [doc.title, doc.body]
      .flat()
      .filter((value): value is string | number => value !== undefined)
      .flatMap((value) => String(value).split(/[^\p{L}\p{N}]+/u))
      .filter((word) => word !== '');
  /** A word as a query may spell it: whole, cut, re-cased or re-accented. */
  const spelling = fc.constantFrom(
    (word: string) => word,
    (word: string) => [...word].slice(0, 2).join(''),
    (word: string) => [...word].slice(0, 1).join(''),
    (word: string) => word.toUpperCase(),
    (word: string) => word.toLowerCase().replace(/e/g, 'é').replace(/a/g, 'À'),
  );
  /** Words of one item of the corpus (mostly found), or of the vocabulary or none (often not). */
  const piece = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.nat(), fc.nat(), spelling) },
    { weight: 1, arbitrary: fc.tuple(fc.constant(-1), fc.nat(), spelling) },
    { weight: 1, arbitrary: fc.constantFrom('zzqx', 'nothing9', 'a', 'é', '東', 'タ') },
  );
  const query = fc
    .tuple(
      fc.nat(CORPUS_SIZE - 1),
      fc.array(fc.tuple(piece, fc.constantFrom(' ', ',', '!', '🙂', ' - ', '')), {
        minLength: 1,
        maxLength: 4,
      }),
      fc.integer({ min: 1, max: 7 }),
      fc.constantFrom(null, 'rank', '-rank', '_id'),
      fc.boolean(),
      fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    )
    .map(([source, parts, limit, sort, ascending, minRank]) => ({
      q: parts
        .map(([part, separator]) => {
          if (typeof part === 'string') return part + separator;
          const [from, at, spell] = part;
          const words = from === -1 ? VOCABULARY : surfaceWords(corpus[source]!);
          return words.length === 0 ? separator : spell(words[at % words.length]!) + separator;
        })
        .join(''),
      limit,
      sort,
      ascending,
      minRank,
    }));

  beforeAll(async () => {
    await bulk(COLLECTION, corpus);
    await configureSearch(COLLECTION, RULE);
  });

  /** The model's order: the sort field, ties broken by _id in the same direction. */
  function ordered(items: Record<string, unknown>[], sort: string | null, ascending: boolean) {
    const field = sort === null ? '_id' : sort.replace(/^-/, '');
    const direction = sort?.startsWith('-') ? -1 : ascending ? 1 : -1;
    const compare = (a: unknown, b: unknown) =>
      a === b ? 0 : (a as string) < (b as string) ? -1 : 1;
    return [...items].sort(
      (a, b) => direction * (compare(a[field], b[field]) || compare(a._id, b._id)),
    );
  }

  it('answers every query through every page exactly as the tokenizer model, and counts the same', async () => {
    await fc.assert(
      fc.asyncProperty(query, async ({ q, limit, sort, ascending, minRank }) => {
        const words = queryWords(q, RULE.minTokenLength);
        if ('problem' in words) throw new Error(`generated a refused query: ${q}`);
        const expected = ordered(
          corpus.filter(
            (doc) =>
              wordsMatch(itemWords(doc, RULE), words) &&
              (minRank === null || (doc.rank as number) >= minRank),
          ),
          sort,
          ascending,
        ).map((doc) => doc._id);
        const params = new URLSearchParams({ q, limit: String(limit) });
        if (sort !== null) params.set('sort', sort);
        if (!sort?.startsWith('-')) params.set('sortOrder', ascending ? 'asc' : 'desc');
        if (minRank !== null) params.set('rank[gte]', String(minRank));
        const first = await api.get(`/data/${COLLECTION}?${params.toString()}`);
        const seen: string[] = [];
        if (first.status === 204) expect(expected).toEqual([]);
        else {
          expect(first.status).toBe(200);
          const next = linkTarget(first);
          const rest = next === undefined ? [] : await collectPages(api, next);
          for (const page of [first, ...rest]) {
            const items = page.body as Record<string, unknown>[];
            expect(items.length).toBeLessThanOrEqual(limit);
            for (const doc of items) expect(doc).not.toHaveProperty(WORDS_FIELD);
            seen.push(...items.map((doc) => doc._id as string));
          }
        }
        expect(seen).toEqual(expected);
        params.delete('limit');
        params.delete('sort');
        params.delete('sortOrder');
        const counted = await api.get(`/data/${COLLECTION}/count?${params.toString()}`).expect(200);
        expect(counted.body).toEqual({ count: expected.length });
      }),
      { numRuns: 40, seed: 4949 },
    );
  });

  mongoOnly(
    "explain's index use for q: winningPlan is MongoDB's output, FerretDB reports its SQL plan",
    () => {
      it('reads the word index for q', async () => {
        // The index PUT /data/{c}/search made is the one the query reads.
        const res = await api
          .get(`/data/${COLLECTION}/explain`, { query: { q: '北京' } })
          .expect(200);
        expect(res.body).toMatchObject({ indexUsed: WORDS_INDEX });
      });
    },
  );
});
