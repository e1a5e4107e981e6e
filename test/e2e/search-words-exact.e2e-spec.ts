import { MongoClient, type Document } from 'mongodb';
import { testDatabaseUri, TEST_ADMIN_KEY, uniqueDbName } from '../support/app';
import { startService, type ServiceProcess } from '../support/service-process';
import { startWireProxy, type WireProxy } from '../support/wire-proxy';
import { until } from '../support/until';
import { itemWords } from '../../src/data/search/tokenizer';
import { tenantDatabaseName } from '../../src/placement';

/**
 * Words stay exact under writes while a build runs and after its instance dies. Writers of every
 * kind (create, bulk, find-or-create, PUT by id touching a search field and not, PUT by filter
 * with multi, PATCH on an array, import insert and upsert, delete) run while the build of a new
 * configuration walks the collection. The building instance is SIGKILLed at a point the test
 * chooses — its 41st word-list write is held by the wire proxy, so it dies with 40 written, on
 * every run — writes go on through a second instance, the first is started again and takes the
 * build over once its lease ran out, and writers go on meanwhile. At the end the build is
 * `ready` and a scan of the database finds every item's stored words equal to the tokenizer of
 * its stored body.
 *
 * On FerretDB a filtered update is not re-checked at write time, so an instance's writes and
 * another instance's build could interleave on one item (the documented limit of several
 * instances there): writes go through the instance that builds, and the second instance (which
 * only takes writes while no build runs) does not take builds over. On MongoDB the same writes
 * would be exact through any instance.
 */
const SEED = 200;
const HELD_AFTER = 40;
const RULE = { fields: ['title', 'body', 'tags'], minTokenLength: 2 };
const ENV = {
  LOG_LEVEL: 'warn',
  REGISTRY_CACHE_MS: '100',
  SEARCH_BUILD_BATCH: '20',
  SEARCH_BUILD_LEASE_MS: '1500',
  LIFECYCLE_POLL_MS: '100',
};
/** The second instance takes writes but never takes a build over (see above). */
const QUIET_ENV = { ...ENV, LIFECYCLE_POLL_MS: '3600000' };
const admin = { 'X-Api-Key': TEST_ADMIN_KEY };
const services: ServiceProcess[] = [];
let proxy: WireProxy | undefined;
let client: MongoClient | undefined;

afterAll(async () => {
  await Promise.all(services.map((s) => s.kill()));
  await proxy?.close();
  await client?.close();
});

const WORDS = [
  'Crème',
  'brûlée',
  'RED',
  'shoes',
  '東京',
  'タワー',
  'naïve',
  'café',
  'blue',
  'size-42',
];
const text = (n: number, k: number): string =>
  `${WORDS[n % WORDS.length]} ${WORDS[(n * 3 + k) % WORDS.length]}! ${n}`;

/** A build's write: a `$set` of the word list alone (the writers' updates set `_updatedAt` too). */
function isBuildWrite(command: Document, physical: string): boolean {
  const setsWordsOnly = (u: unknown): boolean => {
    const set = (u as { $set?: Record<string, unknown> } | undefined)?.$set;
    return set !== undefined && Object.keys(set).join() === '_words';
  };
  if (command.update === physical)
    return ((command.updates ?? []) as { u: unknown }[]).some((one) => setsWordsOnly(one.u));
  if (command.findAndModify === physical) return setsWordsOnly(command.update);
  return false;
}

interface Writer {
  stop(): Promise<void>;
  rounds(): number;
}

/**
 * Writes of every kind through `service`, round after round, until stopped. A request may fail
 * (its instance is killed under it, a held item): what it did or not is read back by the final
 * scan, which judges only whether stored words follow stored bodies.
 */
function startWriters(service: ServiceProcess, key: Record<string, string>, tag: string): Writer {
  let running = true;
  let rounds = 0;
  const send = (method: string, path: string, body?: unknown) =>
    service.send(method, path, key, body).catch(() => ({ status: 0, body: '', headers: {} }));
  const importLines = async (lines: object[], mode: string): Promise<void> => {
    await fetch(`http://127.0.0.1:${service.port}/import?mode=${mode}`, {
      method: 'POST',
      headers: { ...key, 'Content-Type': 'application/x-ndjson' },
      body: lines.map((line) => JSON.stringify(line)).join('\n'),
    })
      .then((res) => res.text())
      .catch(() => undefined);
  };
  const loop = (async () => {
    for (let n = 0; running; n += 1) {
      const id = `s${(n * 7) % SEED}`;
      const other = `s${(n * 11 + 3) % SEED}`;
      await send('POST', '/data/notes', { item: { title: text(n, 1), body: text(n, 2), n } });
      await send('PUT', `/data/notes/_id/${id}`, { values: { title: text(n, 4) } });
      await send('PUT', `/data/notes/_id/${other}`, { values: { n } });
      await send('PATCH', `/data/notes/_id/${id}`, { push: { field: 'tags', value: text(n, 5) } });
      await send('POST', '/data/notes/bulk', {
        items: [0, 1].map((k) => ({ item: { title: text(n + k, 6), body: text(n, 7) } })),
      });
      await send('POST', '/data/notes', {
        item: { code: `${tag}-${n % 5}`, title: text(n, 8) },
        uniqueField: 'code',
        onConflict: 'return',
      });
      await send('PUT', '/data/notes', {
        filter: { n: n % 3 },
        values: { body: text(n, 9) },
        multi: true,
      });
      await importLines(
        [
          { type: 'item', collection: 'notes', item: { _id: other, title: text(n, 10), n } },
          { type: 'item', collection: 'notes', item: { _id: `${tag}-i${n}`, body: text(n, 11) } },
        ],
        'upsert',
      );
      await send('DELETE', `/data/notes/_id/${tag}-i${n - 1}`);
      rounds += 1;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
    rounds: () => rounds,
  };
}

it('keeps every item’s words exact under writes of every kind, across a SIGKILL of the building instance', async () => {
  const dbName = uniqueDbName(__filename);
  proxy = await startWireProxy(testDatabaseUri());
  const building = await startService({ ...ENV, MONGODB_DB_NAME: dbName, MONGODB_URI: proxy.uri });
  services.push(building);
  const created = await building.send('POST', '/admin/users', admin, {
    email: 'words@example.com',
    subject: 'words-exact-subject',
  });
  expect(created.status).toBe(200);
  const key = { 'X-Api-Key': (JSON.parse(created.body) as { apiKey: string }).apiKey };
  for (let at = 0; at < SEED; at += 100) {
    const items = Array.from({ length: 100 }, (_, i) => ({
      item: { _id: `s${at + i}`, title: text(at + i, 0), body: text(at + i, 1), n: (at + i) % 3 },
    }));
    expect((await building.send('POST', '/data/notes/bulk', key, { items })).status).toBe(200);
  }

  client = await MongoClient.connect(testDatabaseUri());
  const main = client.db(dbName);
  const entry = await main.collection('data_collections').findOne({ name: 'notes' });
  const physical = entry?.physical as string;
  const items = client
    .db(entry?.database ?? tenantDatabaseName(dbName, { kind: 'user', id: 'words-exact-subject' }))
    .collection(physical);

  // The build's 41st word-list write is held: the instance dies with 40 written.
  let buildWrites = 0;
  proxy.hold((command) => isBuildWrite(command, physical) && ++buildWrites > HELD_AFTER);
  const writers = startWriters(building, key, 'a');
  const put = await building.send('PUT', '/data/notes/search', key, RULE);
  expect(put.status).toBe(202);
  await until('the build to reach its 41st write', () => proxy?.held() === 1, 60_000);
  await building.kill();
  await writers.stop();
  expect(writers.rounds()).toBeGreaterThan(0);

  // While no build runs, a second instance takes writes.
  const second = await startService({ ...QUIET_ENV, MONGODB_DB_NAME: dbName });
  services.push(second);
  const gap = startWriters(second, key, 'b');
  await until('two rounds of writes through the second instance', () => gap.rounds() >= 2, 60_000);
  await gap.stop();
  const stalled = JSON.parse((await second.send('GET', '/data/notes/search', key)).body) as {
    state: string;
  };
  expect(stalled.state).toBe('building');

  // The first instance is back: it takes the build over after the lease, writers go on.
  const again = await startService({ ...ENV, MONGODB_DB_NAME: dbName });
  services.push(again);
  const resumed = startWriters(again, key, 'c');
  await until(
    'the build to end after its takeover',
    async () =>
      (JSON.parse((await again.send('GET', '/data/notes/search', key)).body) as { state: string })
        .state === 'ready',
    120_000,
  );
  // And a whole round of every kind once it is ready, without the build.
  const atReady = resumed.rounds();
  await until(
    'a whole round of writes after the build',
    () => resumed.rounds() >= atReady + 2,
    60_000,
  );
  await resumed.stop();

  // Every item's stored words are its stored body's.
  const stored = await items.find({}).toArray();
  expect(stored.length).toBeGreaterThan(SEED);
  const wrong = stored.filter(
    (item) => JSON.stringify(item._words) !== JSON.stringify(itemWords(item, RULE)),
  );
  expect(wrong.map((item) => ({ _id: item._id, words: item._words }))).toEqual([]);
}, 300_000);
