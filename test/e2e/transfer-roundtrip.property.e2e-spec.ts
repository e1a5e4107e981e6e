import fc from 'fast-check';
import { get, type IncomingMessage } from 'node:http';
import { createGunzip, gzipSync } from 'node:zlib';
import { fieldNameProblem } from '../../src/data/query/json-guard';
import { CLIENT_ID_PATTERN, MANAGED_FIELDS } from '../../src/data/query/data.constants';
import { createTestApp, type TestApp } from '../support/app';
import { createSubKey, createUser } from '../support/factories';
import { as } from '../support/http';
import { exportAs, importAs, resultsOf, type Line } from '../support/ndjson';

/**
 * Export → import into a new tenant → export again gives the same file, apart from the
 * manifest's time, namespace and feed position: for random collections, indexes and items
 * (nested objects, arrays, unicode keys and values, numbers at the edges, date strings, large
 * values). A sub key's export holds exactly its own items. Fixed seeds: every run checks the
 * same cases (change the seed to explore others).
 */

const text = fc.string({ unit: 'grapheme', maxLength: 12 });

/** Field names the service accepts (its own rule decides), not the ones it manages. */
const key = text.filter(
  (name) => fieldNameProblem(name) === null && !MANAGED_FIELDS.has(name) && name !== 'userId',
);

const edgeNumber = fc.oneof(
  fc.constantFrom(
    0,
    -1,
    2 ** 31 - 1,
    -(2 ** 31),
    2 ** 31,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    Number.EPSILON,
    0.1,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

const dateString = fc
  .date({
    min: new Date('0001-01-01T00:00:00Z'),
    max: new Date('9999-12-31T23:59:59Z'),
    noInvalidDate: true,
  })
  .map((date) => date.toISOString());

const scalar = fc.oneof(text, edgeNumber, fc.boolean(), fc.constant(null), dateString);

/** JSON values the service stores: no array directly inside an array. */
const { value } = fc.letrec<{ value: unknown; element: unknown; object: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    tie('element'),
    fc.array(tie('element'), { maxLength: 4 }),
  ),
  element: fc.oneof({ depthSize: 'small' }, scalar, tie('object')),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
}));

const large = fc.string({ unit: 'grapheme-ascii', minLength: 20_000, maxLength: 40_000 });

const itemId = text.filter((id) => CLIENT_ID_PATTERN.test(id));

const item = fc.record(
  {
    _id: itemId,
    fields: fc.dictionary(key, value, { maxKeys: 5 }),
    large: fc.option(large, { nil: undefined, freq: 8 }),
  },
  { requiredKeys: ['fields'] },
);

const collection = fc.record({
  name: fc.constantFrom('alpha', 'beta', 'gamma-1', 'Delta_2'),
  indexes: fc.uniqueArray(fc.record({ field: key, sort: fc.constantFrom('asc', 'desc') }), {
    maxLength: 2,
    selector: (index) => index.field,
  }),
  items: fc.uniqueArray(item, {
    maxLength: 6,
    selector: (entry) => entry._id ?? Symbol('no id'),
  }),
});

const namespace = fc.uniqueArray(collection, {
  minLength: 1,
  maxLength: 3,
  selector: (entry) => entry.name,
});

describe('export and import round trips', () => {
  // Each property runs 15-30 whole round trips (bulk create, export, import, export) against a
  // database that scans: on a loaded 2-core machine one property takes over a minute. The
  // assertions are about what comes back, not how fast (speed is the benchmarks' to measure).
  jest.setTimeout(240_000);
  let t: TestApp;

  let base: string;

  beforeAll(async () => {
    t = await createTestApp(__filename);
    await t.app.listen(0, '127.0.0.1');
    base = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await t?.close();
  });

  it('exports again exactly what it imported, in a new tenant', async () => {
    await fc.assert(
      fc.asyncProperty(namespace, async (collections) => {
        const source = await createUser(t);
        const api = as(t, source);
        for (const c of collections) {
          for (const index of c.indexes) await api.post(`/data/${c.name}/index`, index).expect(200);
          // A unique index the items keep: each has its own `n`.
          await api.post(`/data/${c.name}/index`, { field: 'n', unique: true }).expect(200);
          const items = c.items.map((entry, n) => ({
            ...entry.fields,
            n,
            ...(entry._id !== undefined ? { _id: entry._id } : {}),
            ...(entry.large !== undefined ? { large: entry.large } : {}),
            // Some items name another owner (root keys may), some keep the default.
            ...(n % 3 === 1 ? { userId: `owner-${n}` } : {}),
          }));
          if (items.length > 0) {
            const bulk = await api.post(`/data/${c.name}/bulk`, { items }).expect(200);
            expect(bulk.body.failed).toBe(0);
          }
        }
        const first = await exportAs(t, source);
        expect(first.status).toBe(200);

        const target = await createUser(t);
        const imported = resultsOf(await importAs(t, target, first.text));
        expect(imported.totals).toMatchObject({ outcome: 'complete', failed: 0 });

        const again = await exportAs(t, target);
        const [manifest, ...records] = first.lines;
        const [manifestAgain, ...recordsAgain] = again.lines;
        expect(recordsAgain).toEqual(records);
        expect(manifestAgain?.collections).toEqual(manifest?.collections);
        expect(manifestAgain?.format).toBe(1);
        // The file itself is the same, byte for byte, after the manifest.
        expect(again.text.slice(again.text.indexOf('\n'))).toBe(
          first.text.slice(first.text.indexOf('\n')),
        );
      }),
      { numRuns: 25, seed: 4242 },
    );
  });

  it("gives a sub key exactly the items it owns, which import into a new tenant as the new key's", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ mine: fc.boolean(), fields: fc.dictionary(key, value, { maxKeys: 3 }) }),
          {
            maxLength: 10,
          },
        ),
        async (writes) => {
          const user = await createUser(t);
          const sub = await createSubKey(t, user);
          for (const [n, write] of writes.entries()) {
            const writer = write.mine ? sub : user;
            await as(t, writer)
              .post('/data/shared', { item: { ...write.fields, _id: `i${n}` } })
              .expect(200);
          }
          const all = await exportAs(t, user);
          const owned = all.lines.filter(
            (line) => line.type === 'item' && (line.item as Line).userId === sub.accountId,
          );
          expect(owned).toHaveLength(writes.filter((w) => w.mine).length);
          const mine = await exportAs(t, sub);
          expect(mine.lines.filter((line) => line.type === 'item')).toEqual(owned);
          expect(mine.lines.at(-1)).toMatchObject({ type: 'end', items: owned.length });
        },
      ),
      { numRuns: 15, seed: 777 },
    );
  });

  /**
   * Reads GET /export until `cut` bytes of the body (as sent: gzip-encoded or not) arrived, then
   * breaks the connection; answers the text decoded so far.
   */
  function cutDownload(apiKey: string, cut: number, gzip: boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = get(
        `${base}/export`,
        { headers: { 'X-Api-Key': apiKey, ...(gzip ? { 'Accept-Encoding': 'gzip' } : {}) } },
        (res: IncomingMessage) => {
          expect(res.headers['content-encoding']).toBe(gzip ? 'gzip' : undefined);
          let received = 0;
          let text = '';
          const decoder = gzip ? createGunzip() : null;
          decoder?.setEncoding('utf8');
          decoder?.on('data', (chunk: string) => (text += chunk));
          decoder?.on('error', () => undefined);
          res.on('data', (chunk: Buffer) => {
            if (received >= cut) return;
            const part = chunk.subarray(0, cut - received);
            received += part.length;
            if (decoder) decoder.write(part);
            else text += part.toString('latin1');
            if (received >= cut) {
              res.destroy();
              const done = () =>
                resolve(decoder ? text : Buffer.from(text, 'latin1').toString('utf8'));
              if (decoder) decoder.flush(() => done());
              else done();
            }
          });
          res.on('end', () => {
            if (received < cut) reject(new Error(`the export ended before byte ${cut}`));
          });
        },
      );
      req.on('error', () => undefined);
    });
  }

  it('resumes a download cut at any byte with after: together exactly the full export, no item twice', async () => {
    const user = await createUser(t);
    const items = Array.from({ length: 200 }, (_, n) => ({
      _id: `item-${String(n).padStart(4, '0')}-✓`,
      n,
      pad: 'é'.repeat((n * 37) % 700),
    }));
    for (const name of ['first', 'second'])
      for (let i = 0; i < items.length; i += 200)
        await as(t, user)
          .post(`/data/${name}/bulk`, { items: items.slice(i, i + 200) })
          .expect(200);
    const full = await exportAs(t, user);
    const fullItems = full.text.split('\n').filter((line) => line.startsWith('{"type":"item"'));
    expect(fullItems).toHaveLength(400);
    const gzipped = await exportAs(t, user, {}, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(gzipped.text).not.toBe('');

    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0.001, max: 0.999, noNaN: true }),
        fc.boolean(),
        async (at, gzip) => {
          const sent = gzip ? gzipSizeOf(gzipped) : Buffer.byteLength(full.text);
          const cut = Math.max(1, Math.floor(sent * at));
          const partial = await cutDownload(user.apiKey, cut, gzip);
          // The lines that arrived whole; the last one may be cut.
          const whole = partial.split('\n').slice(0, -1);
          const gotItems = whole.filter((line) => line.startsWith('{"type":"item"'));
          const last = gotItems.at(-1);
          const lastRecord = last === undefined ? null : (JSON.parse(last) as Line);
          const rest = await exportAs(
            t,
            user,
            lastRecord
              ? {
                  after: `${String(lastRecord.collection)}/${String((lastRecord.item as Line)._id)}`,
                }
              : {},
          );
          const restLines = rest.text.split('\n');
          const restItems = restLines.filter((line) => line.startsWith('{"type":"item"'));
          expect([...gotItems, ...restItems]).toEqual(fullItems);
          // The resumed part's end line digests its own items.
          expect(rest.lines.at(-1)).toMatchObject({ type: 'end', items: restItems.length });
        },
      ),
      // 20 cuts of a 400-item export (30 of an 800-item one until CI had to fit in 20 minutes):
      // each run downloads the rest again, and a cut's position, not the export's length, is
      // what the property varies.
      { numRuns: 20, seed: 9090 },
    );
  });
});

/** The gzip-encoded size of a response read whole (superagent decoded it; encode again to size the cut). */
function gzipSizeOf(response: { headers: Record<string, string>; text: string }): number {
  return Number(response.headers['content-length'] ?? 0) || gzipSync(response.text).length;
}
