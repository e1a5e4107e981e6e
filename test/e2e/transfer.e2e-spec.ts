import { gzipSync } from 'node:zlib';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser, type TestUser } from '../support/factories';
import { as } from '../support/http';
import { digestOf, exportAs, importAs, resultsOf, type Line } from '../support/ndjson';
import { until } from '../support/until';
import { WORDS_FIELD } from '../../src/data/query/data.constants';

/** Export and import of a namespace: the format, its options and its refusals. */
describe('export and import', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(__filename, {
      MAX_COLLECTIONS: '4',
      IMPORT_MAX_LINE_BYTES: '2048',
      IMPORT_MAX_LINES: '50',
      IMPORT_MAX_BYTES: '65536',
      // A search configuration's build starts REGISTRY_CACHE_MS + 1 s after it is set.
      REGISTRY_CACHE_MS: '0',
      LIFECYCLE_POLL_MS: '100',
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  async function seeded(): Promise<TestUser> {
    const user = await createUser(t);
    const api = as(t, user);
    await api.post('/data/orders/index', { field: 'number', unique: true }).expect(200);
    for (const n of [3, 1, 2])
      await api
        .post('/data/orders', { item: { _id: `o${n}`, number: n, tags: ['a', { b: null }] } })
        .expect(200);
    await api.post('/data/notes', { item: { _id: 'n1', text: 'héllo ✓' } }).expect(200);
    return user;
  }

  it('exports a manifest, the items by collection then _id, and an end that counts and digests them', async () => {
    const user = await seeded();
    const res = await exportAs(t, user);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const [manifest, ...rest] = res.lines;
    expect(manifest).toMatchObject({
      type: 'manifest',
      format: 1,
      namespace: { kind: 'user', branch: '' },
      collections: [
        { name: 'notes', indexes: [], count: 1 },
        {
          name: 'orders',
          indexes: [{ name: 'number_1', fields: { number: 1 }, unique: true }],
          count: 3,
        },
      ],
    });
    expect(typeof manifest?.feedPosition).toBe('string');
    const items = rest.slice(0, -1);
    expect(items.map((line) => [line.collection, (line.item as Line)._id])).toEqual([
      ['notes', 'n1'],
      ['orders', 'o1'],
      ['orders', 'o2'],
      ['orders', 'o3'],
    ]);
    expect((items[0]?.item as Line).text).toBe('héllo ✓');
    const itemTexts = res.text.split('\n').slice(1, -2);
    // The export carries the namespace's files (none here): the end counts them.
    expect(rest.at(-1)).toEqual({ type: 'end', items: 4, files: 0, sha256: digestOf(itemTexts) });
  });

  it('gzips when the client accepts it, and narrows to the collections asked for', async () => {
    const user = await seeded();
    const res = await exportAs(
      t,
      user,
      { collections: 'orders' },
      { headers: { 'Accept-Encoding': 'gzip' } },
    );
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toContain('Accept-Encoding');
    expect(res.lines.filter((line) => line.type === 'item')).toHaveLength(3);
    expect((res.lines[0]?.collections as Line[]).map((c) => c.name)).toEqual(['orders']);

    const missing = await exportAs(t, user, { collections: 'orders,nope' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('COLLECTION_NOT_FOUND');
    const badAfter = await exportAs(t, user, { after: 'no-slash' });
    expect(badAfter.status).toBe(400);
    // A place in the order, not necessarily a collection: the collections after it by name.
    const between = await exportAs(t, user, { after: 'nz/x' });
    expect(between.lines.filter((l) => l.type === 'item').map((l) => l.collection)).toEqual([
      'orders',
      'orders',
      'orders',
    ]);
  });

  it('resumes after an item', async () => {
    const user = await seeded();
    const res = await exportAs(t, user, { after: 'orders/o1' });
    expect(res.lines[0]).toMatchObject({ type: 'manifest', after: 'orders/o1' });
    const ids = res.lines
      .filter((line) => line.type === 'item')
      .map((line) => (line.item as Line)._id);
    expect(ids).toEqual(['o2', 'o3']);
  });

  it('round-trips into another tenant: the same items, times, owners and indexes', async () => {
    const source = await seeded();
    const exported = await exportAs(t, source);
    const target = await createUser(t);
    const imported = await importAs(t, target, exported.text);
    expect(imported.status).toBe(200);
    const { results, totals } = resultsOf(imported);
    expect(results.map((r) => r.status)).toEqual([200, 201, 201, 201, 201, 200]);
    expect(totals).toMatchObject({ type: 'totals', outcome: 'complete', lines: 6, created: 4 });
    const again = await exportAs(t, target);
    // Identical apart from the manifest's time, namespace and feed position.
    expect(again.lines.slice(1)).toEqual(exported.lines.slice(1));
    expect(again.lines[0]?.collections).toEqual(exported.lines[0]?.collections);
    // The owner field was written as it was: the source's subject, not the target's.
    const stored = await as(t, target).get('/data/orders/_id/o1').expect(200);
    expect(stored.body.userId).toBe(source.subject);
  });

  /** GET /data/{c}/search once its build is done, as `key` sees it. */
  async function searchBuilt(key: TestUser, collection: string): Promise<Line> {
    let view: Line = {};
    await until(`the search build of ${collection}`, async () => {
      const res = await as(t, key).get(`/data/${collection}/search`).expect(200);
      view = res.body as Line;
      return view.state !== 'building';
    });
    return view;
  }

  /** The ids `q` answers in `collection`, and the count it gives. */
  async function searched(key: TestUser, collection: string, q: string) {
    const api = as(t, key);
    const list = await api.get(`/data/${collection}`, { query: { q } });
    const ids = list.status === 204 ? [] : (list.body as { _id: string }[]).map((i) => i._id);
    const count = await api.get(`/data/${collection}/count`, { query: { q } }).expect(200);
    return { ids: ids.sort(), count: (count.body as { count: number }).count };
  }

  it('carries a search configuration: the target builds its own words and q answers the same ids', async () => {
    const source = await createUser(t);
    const api = as(t, source);
    const notes = [
      { _id: 'n1', title: 'Red shoes', body: 'Crème brûlée' },
      { _id: 'n2', title: 'red hat', body: 'invoice 42' },
      { _id: 'n3', title: 'Blue SHOES', body: 'no invoice' },
    ];
    for (const item of notes) await api.post('/data/notes', { item }).expect(200);
    await api
      .put('/data/notes/search', { fields: ['title', 'body'], minTokenLength: 2 })
      .expect(202);
    expect(await searchBuilt(source, 'notes')).toMatchObject({ state: 'ready' });

    const exported = await exportAs(t, source);
    const manifest = exported.lines[0] as { collections: Line[] };
    // The configuration only: no state, counts or version, which the target has of its own.
    expect(manifest.collections[0]?.search).toEqual({
      fields: ['title', 'body'],
      minTokenLength: 2,
    });
    expect(exported.text).not.toContain(WORDS_FIELD);

    const target = await createUser(t);
    const imported = resultsOf(await importAs(t, target, exported.text));
    expect(imported.totals).toMatchObject({ outcome: 'complete', failed: 0, created: 3 });
    const built = await searchBuilt(target, 'notes');
    expect(built).toMatchObject({
      fields: ['title', 'body'],
      minTokenLength: 2,
      state: 'ready',
      indexed: 3,
      total: 3,
    });
    for (const q of ['red', 'sho', 'red sho', 'creme brul', 'invoice', 'blue hat']) {
      const expected = await searched(source, 'notes', q);
      expect(await searched(target, 'notes', q)).toEqual(expected);
    }
    expect((await searched(target, 'notes', 'sho')).ids).toEqual(['n1', 'n3']);
    // The target's export names the same configuration.
    const again = await exportAs(t, target);
    expect(again.lines[0]?.collections).toEqual(manifest.collections);

    // Imported again, an equal configuration is left as it is: no new version, no rebuild.
    const upsert = resultsOf(await importAs(t, target, exported.text, { mode: 'upsert' }));
    expect(upsert.totals).toMatchObject({ outcome: 'complete', failed: 0 });
    const kept = await as(t, target).get('/data/notes/search').expect(200);
    expect(kept.body).toMatchObject({ state: 'ready', version: built.version });
  });

  it("checks a manifest's search configuration as PUT /data/{c}/search does, and a dry run sets none", async () => {
    const user = await createUser(t);
    const manifest = (entry: Line) => ({
      type: 'manifest',
      format: 1,
      collections: [{ name: 'pages', indexes: [], ...entry }],
    });
    const item = { type: 'item', collection: 'pages', item: { _id: 'p1', title: 'Red' } };
    // The rules are set at the end record.
    const end = { type: 'end', items: 1, sha256: digestOf([JSON.stringify(item)]) };

    const bad = resultsOf(
      await importAs(t, user, [manifest({ search: { fields: [], minTokenLength: 0, rank: 1 } })]),
    );
    expect(bad.results[0]).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    const fields = (bad.results[0]?.errors as { field: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['search.fields', 'search.minTokenLength', 'search.rank']);
    const nulled = resultsOf(await importAs(t, user, [manifest({ search: null })]));
    expect(nulled.results[0]).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });

    // A field the manifest's access rules protect cannot be searched.
    const access = {
      sub: { read: 'all', create: 'none', update: 'none', delete: 'none' },
      protectedFields: { sub: ['title'], public: ['title'] },
    };
    const hidden = resultsOf(
      await importAs(t, user, [manifest({ access, search: { fields: ['title'] } })]),
    );
    expect(hidden.results[0]).toMatchObject({ status: 400, code: 'PROTECTED_FIELD' });

    // A dry run checks and sets nothing.
    const good = manifest({ search: { fields: ['title'], minTokenLength: 2 } });
    const dry = resultsOf(await importAs(t, user, [good, item, end], { dryRun: 'true' }));
    expect(dry.totals).toMatchObject({ dryRun: true, failed: 0 });
    await as(t, user).get('/data/pages/search').expect(404);

    // A sub key's manifest may name only the configuration the collection has.
    // An older export's manifest lists the configuration's index too: it is not made as an index.
    const older = manifest({
      indexes: [{ name: 'search_words', fields: { _words: 1 }, unique: false }],
      search: { fields: ['title'], minTokenLength: 2 },
    });
    const done = resultsOf(await importAs(t, user, [older, item, end]));
    expect(done.totals).toMatchObject({ failed: 0 });
    expect(await searchBuilt(user, 'pages')).toMatchObject({ state: 'ready', fields: ['title'] });
    const sub = await createSubKey(t, user);
    const same = resultsOf(await importAs(t, sub, [good]));
    expect(same.results[0]).toMatchObject({ status: 200 });
    const other = manifest({ search: { fields: ['title', 'body'], minTokenLength: 2 } });
    const refused = resultsOf(await importAs(t, sub, [other]));
    expect(refused.results[0]).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    // A sub key's export names no configuration: it is root and team keys' to read.
    const subExport = await exportAs(t, sub, { collections: 'pages' });
    expect((subExport.lines[0] as { collections: Line[] }).collections[0]).not.toHaveProperty(
      'search',
    );
  });

  it('gives a sub key its own items only, and makes its imports its own', async () => {
    const user = await createUser(t);
    const sub = await createSubKey(t, user);
    await as(t, user)
      .post('/data/things', { item: { _id: 'theirs', userId: 'someone-else' } })
      .expect(200);
    await as(t, sub)
      .post('/data/things', { item: { _id: 'mine' } })
      .expect(200);
    const res = await exportAs(t, sub);
    expect(res.lines[0]).toMatchObject({ owner: { field: 'userId', value: sub.accountId } });
    expect(
      res.lines.filter((line) => line.type === 'item').map((line) => (line.item as Line)._id),
    ).toEqual(['mine']);

    const imported = await importAs(t, sub, [
      { type: 'item', collection: 'things', item: { _id: 'new', userId: 'someone-else' } },
    ]);
    expect(resultsOf(imported).results[0]).toMatchObject({ status: 201, _id: 'new' });
    const stored = await as(t, user).get('/data/things/_id/new').expect(200);
    expect(stored.body.userId).toBe(sub.accountId);
  });

  it('inserts, refuses a taken _id in insert mode and replaces it in upsert mode, and a dry run writes nothing', async () => {
    const user = await createUser(t);
    const line = (total: number) => ({
      type: 'item',
      collection: 'c',
      item: { _id: 'x', total, _createdAt: '2020-01-01T00:00:00.000Z' },
    });
    expect(resultsOf(await importAs(t, user, [line(1)])).results[0]).toMatchObject({
      status: 201,
    });
    const dup = resultsOf(await importAs(t, user, [line(2)])).results[0];
    expect(dup).toMatchObject({ status: 409, code: 'DUPLICATE_ITEM', existingId: 'x' });
    const dry = await importAs(t, user, [line(3)], { mode: 'upsert', dryRun: 'true' });
    expect(resultsOf(dry).results[0]).toMatchObject({ status: 200, _id: 'x' });
    expect(resultsOf(dry).totals).toMatchObject({ dryRun: true, replaced: 1 });
    expect((await as(t, user).get('/data/c/_id/x').expect(200)).body.total).toBe(1);
    const upsert = await importAs(t, user, [line(4)], { mode: 'upsert' });
    expect(resultsOf(upsert).results[0]).toMatchObject({ status: 200, _id: 'x' });
    const stored = (await as(t, user).get('/data/c/_id/x').expect(200)).body as Line;
    expect(stored).toMatchObject({ total: 4, _createdAt: '2020-01-01T00:00:00.000Z' });
    expect(stored._updatedAt).toBe('2020-01-01T00:00:00.000Z');
  });

  /** The database commands the service has sent so far (the metric counts round trips). */
  async function commands(): Promise<number> {
    const res = await t.http().get('/metrics').expect(200);
    return Number(/^mongodb_commands_total (\d+)/m.exec(res.text)?.[1]);
  }

  it('writes a run of item lines together, with the results and events of writing them one by one', async () => {
    const user = await createUser(t);
    const api = as(t, user);
    await api.post('/data/runs/index', { field: 'email', unique: true }).expect(200);
    await api.post('/data/runs', { item: { _id: 'taken', email: 'held@example.com' } }).expect(200);
    const line = (item: Line) => ({ type: 'item', collection: 'runs', item });
    const fresh = Array.from({ length: 40 }, (_, i) => line({ _id: `r${i}`, n: i }));
    const body = [
      line({ _id: 'first' }), // the file's first line of the collection: written by itself
      ...fresh.slice(0, 10),
      line({ _id: 'taken' }), // stored already
      ...fresh.slice(10, 20),
      line({ email: 'held@example.com' }), // a unique index refuses it
      ...fresh.slice(20),
      line({ _id: 'r0' }), // an earlier line of the file holds it
    ];
    const before = await commands();
    const { results, totals } = resultsOf(await importAs(t, user, body));
    const used = (await commands()) - before;
    const refused: Record<number, Line> = {
      12: { status: 409, code: 'DUPLICATE_ITEM', existingId: 'taken' },
      23: { status: 409, code: 'DUPLICATE_ITEM' },
      44: { status: 409, code: 'DUPLICATE_ITEM', existingId: 'r0' },
    };
    expect(results).toHaveLength(body.length);
    results.forEach((result, i) =>
      expect(result).toMatchObject({ line: i + 1, ...(refused[i + 1] ?? { status: 201 }) }),
    );
    expect(results[22]?.existingId).toBeUndefined();
    expect(totals).toMatchObject({ outcome: 'complete', created: 41, failed: 3 });
    // Written one by one, each line takes four commands at least (the feed's intent opened and
    // closed, the insert, its event); the batches need a few each, the four lines written alone
    // their own.
    expect(used).toBeLessThan(2 * body.length);
    const events = (await api.get('/events').expect(200)).body.events as Line[];
    const created = events
      .filter((e) => e.resource === 'item' && e.type === 'created')
      .map((e) => (e.data as Line)._id);
    expect(created).toEqual(['taken', 'first', ...fresh.map((l) => l.item._id)]);

    // An upsert's run replaces the stored items and creates the others.
    const upsert = resultsOf(
      await importAs(
        t,
        user,
        [line({ _id: 'first', v: 2 }), line({ _id: 'r1', n: -1 }), line({ _id: 'new' })],
        {
          mode: 'upsert',
        },
      ),
    );
    expect(upsert.results.map((r) => r.status)).toEqual([200, 200, 201]);
    expect((await api.get('/data/runs/_id/r1').expect(200)).body).toMatchObject({ n: -1 });
    expect((await api.get('/data/runs/count').expect(200)).body).toEqual({ count: 43 });
  });

  it('answers a malformed line on its own and goes on', async () => {
    const user = await createUser(t);
    const body = [
      '{"type":"item","collection":"c","item":{"a":1}}',
      'not json',
      '{"type":"item","collection":"c","item":{"$bad":1}}',
      '{"type":"other"}',
      '{"type":"item","collection":"c","item":{"a":2}}',
      'x'.repeat(3000),
      '{"type":"item","collection":"c","item":{"_createdAt":"yesterday"}}',
      '{"type":"item","collection":"c","item":{"a":3}}',
    ].join('\n');
    const { results, totals } = resultsOf(await importAs(t, user, body));
    expect(results.map((r) => [r.line, r.status, r.code])).toEqual([
      [1, 201, undefined],
      [2, 400, 'MALFORMED_LINE'],
      [3, 400, 'VALIDATION_FAILED'],
      [4, 400, 'MALFORMED_LINE'],
      [5, 201, undefined],
      [6, 413, 'LINE_TOO_LONG'],
      [7, 400, 'VALIDATION_FAILED'],
      [8, 201, undefined],
    ]);
    expect(totals).toMatchObject({ outcome: 'complete', lines: 8, created: 3, failed: 5 });
  });

  it('refuses a taken uniqueField value per line, and names the holder', async () => {
    const user = await createUser(t);
    const items = ['A', 'B', 'A', 'C', 'B'].map((sku, i) => ({
      type: 'item',
      collection: 'products',
      item: { _id: `p${i}`, sku },
    }));
    const { results } = resultsOf(await importAs(t, user, items, { uniqueField: 'sku' }));
    expect(results.map((r) => [r.status, r.existingId])).toEqual([
      [201, undefined],
      [201, undefined],
      [409, 'p0'],
      [201, undefined],
      [409, 'p1'],
    ]);
  });

  it('reports a collection quota reached mid-stream per line, and writes the rest', async () => {
    const user = await createUser(t);
    const names = ['a1', 'a2', 'a3', 'a4', 'a5', 'a1'];
    const { results, totals } = resultsOf(
      await importAs(
        t,
        user,
        names.map((collection) => ({ type: 'item', collection, item: {} })),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 409, 201]);
    expect(results[4]?.code).toBe('COLLECTION_QUOTA_EXCEEDED');
    expect(totals).toMatchObject({ outcome: 'complete', created: 5, failed: 1 });
  });

  it('checks an end record against the lines before it', async () => {
    const user = await createUser(t);
    const item = '{"type":"item","collection":"c","item":{"a":1}}';
    const good = { type: 'end', items: 1, sha256: digestOf([item]) };
    const ok = resultsOf(await importAs(t, user, `${item}\n${JSON.stringify(good)}\n`));
    expect(ok.results.map((r) => r.status)).toEqual([201, 200]);
    const bad = resultsOf(
      await importAs(t, user, `${item}\n${JSON.stringify({ ...good, items: 2 })}\n`),
    );
    expect(bad.results[1]).toMatchObject({ status: 400, code: 'DIGEST_MISMATCH' });
    // The digest covers the lines after the manifest, whatever became of the manifest itself.
    const refused = { type: 'manifest', format: 1, collections: [{ name: '-bad' }] };
    const after = resultsOf(
      await importAs(
        t,
        user,
        [refused, JSON.parse(item) as Line, good].map((l) => JSON.stringify(l)).join('\n'),
      ),
    );
    expect(after.results.map((r) => r.status)).toEqual([400, 201, 200]);
  });

  it('creates the collections and indexes a manifest names, and applies its uniqueField', async () => {
    const user = await createUser(t);
    const manifest = {
      type: 'manifest',
      format: 1,
      collections: [
        {
          name: 'm',
          uniqueField: 'code',
          indexes: [{ name: 'code_1', fields: { code: 1 }, unique: false }],
        },
      ],
    };
    const lines = [
      manifest,
      { type: 'item', collection: 'm', item: { code: 'k' } },
      { type: 'item', collection: 'm', item: { code: 'k' } },
    ];
    const { results } = resultsOf(await importAs(t, user, lines));
    expect(results.map((r) => r.status)).toEqual([200, 201, 409]);
    const collections = (await as(t, user).get('/data').expect(200)).body as Line[];
    expect(collections[0]).toMatchObject({
      name: 'm',
      indexes: [{ name: '_id_' }, { name: 'code_1', fields: { code: 1 } }],
    });
    // A sub key makes collections but no indexes.
    const sub = await createSubKey(t, user);
    const fromSub = resultsOf(await importAs(t, sub, [manifest]));
    expect(fromSub.results[0]).toMatchObject({ status: 200 });
    const other = {
      ...manifest,
      collections: [{ name: 'm2', indexes: [{ name: 'x_1', fields: { x: 1 }, unique: false }] }],
    };
    const refused = resultsOf(await importAs(t, sub, [other]));
    expect(refused.results[0]).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    const m2 = (await as(t, user).get('/data/m2/index').expect(200)).body as Line[];
    expect(m2.map((index) => index.name)).not.toContain('x_1');
    const empty = resultsOf(await importAs(t, user, [{ type: 'manifest', format: 1 }]));
    expect(empty.results[0]).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    const future = resultsOf(await importAs(t, user, [{ ...manifest, format: 2 }]));
    expect(future.results[0]).toMatchObject({ status: 400, code: 'MALFORMED_LINE' });
  });

  it('stops at the line beyond IMPORT_MAX_LINES, and says so in the totals', async () => {
    const user = await createUser(t);
    const lines = Array.from({ length: 60 }, () => ({
      type: 'item',
      collection: 'c',
      item: {},
    }));
    const { results, totals } = resultsOf(await importAs(t, user, lines));
    expect(results).toHaveLength(51);
    expect(results.at(-1)).toMatchObject({ line: 51, status: 413, code: 'TOO_MANY_LINES' });
    expect(totals).toMatchObject({ outcome: 'stopped', stoppedAt: 51, created: 50 });
    expect((await as(t, user).get('/data/c/count').expect(200)).body.count).toBe(50);
  });

  it('reads a gzip body, and refuses before streaming what it can', async () => {
    const user = await createUser(t);
    const body = gzipSync('{"type":"item","collection":"z","item":{"a":1}}\n');
    const zipped = await importAs(t, user, body, {}, { 'Content-Encoding': 'gzip' });
    expect(resultsOf(zipped).results[0]).toMatchObject({ status: 201 });

    const broken = await importAs(
      t,
      user,
      Buffer.from('not gzip'),
      {},
      {
        'Content-Encoding': 'gzip',
      },
    );
    expect(resultsOf(broken).totals).toMatchObject({
      outcome: 'stopped',
      code: 'INVALID_CONTENT_ENCODING',
    });

    const json = await as(t, user).post('/import', { a: 1 });
    expect(json.status).toBe(415);
    const none = await as(t, user).post('/import');
    expect(none.status).toBe(400);
    const put = await t
      .http()
      .put('/import')
      .set('X-Api-Key', user.apiKey)
      .set('Content-Type', 'application/x-ndjson')
      .send('{}');
    expect(put.status).toBe(405);
    const big = await importAs(t, user, 'x'.repeat(70_000));
    expect(big.status).toBe(413);
    const keyed = await importAs(t, user, '{}', {}, { 'Idempotency-Key': 'k-1' });
    expect(keyed.status).toBe(400);
    const anonymous = await t
      .http()
      .post('/import')
      .set('Content-Type', 'application/x-ndjson')
      .send('{}');
    expect(anonymous.status).toBe(401);
  });

  it('makes created and updated events for imported items', async () => {
    const user = await createUser(t);
    const item = { type: 'item', collection: 'ev', item: { _id: 'e1', v: 1 } };
    await importAs(t, user, [item]);
    await importAs(t, user, [item], { mode: 'upsert' });
    const events = (await as(t, user).get('/events').expect(200)).body.events as Line[];
    expect(
      events.filter((e) => e.resource === 'item').map((e) => [e.type, (e.data as Line)?._id]),
    ).toEqual([
      ['created', 'e1'],
      ['updated', 'e1'],
    ]);
  });
});
