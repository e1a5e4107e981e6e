// Export and import of a namespace through the client's streaming helpers, against a running
// service: a round trip into another user, a download cut short and resumed, the end line's check,
// and an import's line-by-line answer. Failures are node:assert errors.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ApiProblemError,
  exportNamespace,
  importNamespace,
  uploadFile,
  TransferError,
  unwrap,
  type ExportOptions,
  type ExportRecord,
  type ImportLine,
  type Schemas,
} from '../src';
import { newUser, type Target } from './support';

type ItemRecord = Schemas['ExportItemRecordDto'];

async function collect<T>(records: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const record of records) all.push(record);
  return all;
}

const itemsOf = (records: ExportRecord[]): ItemRecord[] =>
  records.filter((record): record is ItemRecord => record.type === 'item');

const orderId = (n: number): string => `o${String(n).padStart(4, '0')}`;

/** A user with `orders` (a unique index, `count` items) and `notes` (one item), and its options. */
async function seeded(
  target: Target,
  count: number,
): Promise<{ options: ExportOptions; subject: string }> {
  const { api, apiKey, subject } = await newUser(target);
  const orders = { params: { path: { collection: 'orders' } } };
  await unwrap(
    api.POST('/data/{collection}/index', { ...orders, body: { field: 'number', unique: true } }),
  );
  const items = Array.from({ length: count }, (_, n) => ({
    _id: orderId(n),
    number: n,
    note: 'a line long enough for a few dozen of them in a few kilobytes',
  }));
  const created = await unwrap(api.POST('/data/{collection}/bulk', { ...orders, body: { items } }));
  assert.ok(created.results.every((result) => result.status === 200));
  await unwrap(
    api.POST('/data/{collection}', {
      params: { path: { collection: 'notes' } },
      body: { item: { _id: 'n1', text: 'héllo ✓' } },
    }),
  );
  return { options: { baseUrl: target.baseUrl, apiKey }, subject };
}

/** The response with its body ended after `bytes` bytes: by a network error, or as if complete. */
function cutShort(response: Response, bytes: number, how: 'error' | 'close'): Response {
  assert.ok(response.body);
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  let passed = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      const room = bytes - passed;
      passed += value.length;
      if (value.length < room) return controller.enqueue(value);
      controller.enqueue(value.subarray(0, room));
      await reader.cancel();
      if (how === 'error') controller.error(new TypeError('terminated'));
      else controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

/** A fetch that answers through `change`; the `after` and Content-Encoding of each export. */
function fetchThrough(
  change: (response: Response, request: number) => Response | Promise<Response>,
): {
  fetch: (request: Request) => Promise<Response>;
  afters: (string | null)[];
  encodings: (string | null)[];
} {
  const afters: (string | null)[] = [];
  const encodings: (string | null)[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    afters.push(new URL(request.url).searchParams.get('after'));
    const response = await globalThis.fetch(request);
    encodings.push(response.headers.get('Content-Encoding'));
    return change(response, afters.length - 1);
  };
  return { fetch, afters, encodings };
}

/**
 * Export, import into another user (the export piped into the import, both streaming), export
 * again: the same items, indexes and digest.
 */
export async function exportImportFlow(target: Target): Promise<void> {
  const source = await seeded(target, 100);
  const observed = fetchThrough((response) => response);
  const exported = await collect(exportNamespace({ ...source.options, fetch: observed.fetch }));
  // fetch asks for gzip and decodes it; the lines are read from the decoded stream.
  assert.deepEqual(observed.encodings, ['gzip']);
  const [manifest] = exported;
  assert.equal(manifest?.type, 'manifest');
  assert.deepEqual(
    manifest.collections.map((c) => [c.name, c.count, c.indexes.map((i) => i.name)]),
    [
      ['notes', 1, []],
      ['orders', 100, ['number_1']],
    ],
  );
  const items = itemsOf(exported);
  assert.deepEqual(
    items.map((record) => `${record.collection}/${record.item._id}`),
    ['notes/n1', ...Array.from({ length: 100 }, (_, n) => `orders/${orderId(n)}`)],
  );
  assert.equal(items[0]?.item.text, 'héllo ✓');
  // The end record: the item lines (as the service wrote them: JSON.stringify) counted and digested.
  const digest = createHash('sha256');
  for (const record of items) digest.update(`${JSON.stringify(record)}\n`);
  assert.deepEqual(exported.at(-1), {
    type: 'end',
    items: 101,
    files: 0,
    sha256: digest.digest('hex'),
  });

  const other = await newUser(target);
  const options = { baseUrl: target.baseUrl, apiKey: other.apiKey };
  const answer = await collect(importNamespace(options, exportNamespace(source.options)));
  // A result per line (the manifest and the end are accepted with 200), then the totals.
  assert.deepEqual(
    answer.map((line) => (line.type === 'result' ? line.status : line.type)),
    [200, ...items.map(() => 201), 200, 'totals'],
  );
  assert.deepEqual(answer.at(-1), {
    type: 'totals',
    outcome: 'complete',
    dryRun: false,
    lines: 103,
    created: 101,
    replaced: 0,
    failed: 0,
  });
  const again = await collect(exportNamespace(options));
  assert.deepEqual(itemsOf(again), items);
  assert.deepEqual(again.at(-1), exported.at(-1));
  assert.equal(again[0]?.type, 'manifest');
  assert.deepEqual(again[0].collections, manifest.collections);
  // Owner values are kept: the items are still the source user's.
  assert.equal(items[1]?.item.userId, source.subject);
}

/**
 * Downloads cut short are resumed after the last complete item: each item comes once, and the
 * end record digests them as an uncut export's does. A corrupted line, cuts that bring nothing
 * new, and a refusal end the export with their errors.
 */
export async function resumedExportFlow(target: Target): Promise<void> {
  const { options } = await seeded(target, 120);
  const whole = await collect(exportNamespace(options));

  // Every response ends after 4 KB: the first by a network error, the others as if complete.
  const cutting = fetchThrough((response, request) =>
    cutShort(response, 4096, request === 0 ? 'error' : 'close'),
  );
  const resumed = await collect(
    exportNamespace({ ...options, fetch: cutting.fetch, retryDelayMs: 0 }),
  );
  assert.ok(cutting.afters.length > 3, `${cutting.afters.length} requests`);
  assert.equal(cutting.afters[0], null);
  const keys = itemsOf(resumed).map((record) => `${record.collection}/${record.item._id}`);
  for (const after of cutting.afters.slice(1))
    assert.ok(after && keys.includes(after), after ?? '');
  assert.deepEqual(itemsOf(resumed), itemsOf(whole));
  assert.equal(new Set(keys).size, 121);
  assert.deepEqual(resumed.at(-1), whole.at(-1));
  assert.deepEqual(
    resumed.filter((record) => record.type === 'manifest').map((record) => record.after),
    [undefined],
  );

  // An item line changed on the way: its response's end line does not match.
  const tampered = fetchThrough(
    async (response) =>
      new Response((await response.text()).replace('héllo', 'hello'), { status: 200 }),
  );
  await assert.rejects(
    collect(exportNamespace({ ...options, fetch: tampered.fetch })),
    (error) => error instanceof TransferError && error.reason === 'mismatch',
  );

  // Cut inside the manifest every time: no new item, so two resumes, then the error.
  const stuck = fetchThrough((response) => cutShort(response, 10, 'close'));
  await assert.rejects(
    collect(exportNamespace({ ...options, fetch: stuck.fetch, retries: 2, retryDelayMs: 0 })),
    (error) => error instanceof TransferError && error.reason === 'cut',
  );
  assert.equal(stuck.afters.length, 3);

  // A refusal is not a cut: its problem, at once.
  const refused = fetchThrough((response) => response);
  await assert.rejects(
    collect(exportNamespace({ ...options, fetch: refused.fetch }, { collections: 'orders,nope' })),
    (error) =>
      error instanceof ApiProblemError &&
      error.status === 404 &&
      error.problem?.code === 'COLLECTION_NOT_FOUND',
  );
  assert.equal(refused.afters.length, 1);
}

/**
 * An export with files, cut inside a file on every response: the file is sent again whole from
 * the last complete point, and the lines of it already given are skipped, so the records are
 * those of an uncut export, each once, with the same end.
 */
export async function resumedExportWithFilesFlow(target: Target): Promise<void> {
  const { options } = await seeded(target, 2);
  // Two files of 500,000 bytes, three chunk lines each (192 KiB but the last), then a small one.
  const bytes = new Uint8Array(500_000).map((_, i) => (i * 31) % 251);
  const first = await uploadFile(options, new Blob([bytes]), { name: 'first.bin' });
  await uploadFile(options, new Blob([bytes.reverse()]), { name: 'second.bin' });
  await uploadFile(options, new Blob(['tail']), { name: 'tail.txt', contentType: 'text/plain' });
  const whole = await collect(exportNamespace(options, { files: 'true' }));
  const chunks = ['file-chunk', 'file-chunk', 'file-chunk'];
  assert.deepEqual(
    whole.map((record) => record.type),
    [
      'manifest',
      'item',
      'item',
      'item',
      'file',
      ...chunks,
      'file',
      ...chunks,
      'file',
      'file-chunk',
      'end',
    ],
  );

  // Each response ends 300 KB later than the one before, inside a file's chunk lines: the first
  // two inside the first file (resumed after the last item), the third inside the second file
  // (resumed after the first), the fourth is whole.
  const cutting = fetchThrough((response, request) =>
    cutShort(response, 300_000 * (request + 1), 'close'),
  );
  const resumed = await collect(
    exportNamespace({ ...options, fetch: cutting.fetch, retryDelayMs: 0 }, { files: 'true' }),
  );
  assert.deepEqual(cutting.afters, [null, 'orders/o0001', 'orders/o0001', `~files/${first.id}`]);
  // The same lines, each once, and the same end; only the manifest's time differs.
  assert.deepEqual(resumed.slice(1), whole.slice(1));
  assert.equal(resumed[0]?.type, 'manifest');
  assert.equal(resumed.filter((record) => record.type === 'manifest').length, 1);
}

/** An import answers line by line: a malformed line is its own 400, and the import goes on. */
export async function importLinesFlow(target: Target): Promise<void> {
  const { api, apiKey } = await newUser(target);
  const options = { baseUrl: target.baseUrl, apiKey };
  const item = (id: string, total: number): ExportRecord => ({
    type: 'item',
    collection: 'orders',
    item: {
      _id: id,
      total,
      _createdAt: '2026-01-05T10:00:00.000Z',
      _updatedAt: '2026-01-05T10:00:00.000Z',
    },
  });
  // Lines made as the body is sent, one a millisecond.
  async function* lines(): AsyncGenerator<ExportRecord | string> {
    const all = [
      item('a', 1),
      'not json',
      '{"type":"item","collection":"orders","item":{"$bad":1}}',
      item('b', 2),
    ];
    for (const line of all) {
      await delay(1);
      yield line;
    }
  }
  const answer: ImportLine[] = await collect(importNamespace(options, lines()));
  assert.deepEqual(
    answer.map((line) =>
      line.type === 'result' ? [line.line, line.status, line.code] : line.type,
    ),
    [
      [1, 201, undefined],
      [2, 400, 'MALFORMED_LINE'],
      [3, 400, 'VALIDATION_FAILED'],
      [4, 201, undefined],
      'totals',
    ],
  );
  assert.deepEqual(answer.at(-1), {
    type: 'totals',
    outcome: 'complete',
    dryRun: false,
    lines: 4,
    created: 2,
    replaced: 0,
    failed: 2,
  });

  // Upsert replaces by _id; a dry run says so and writes nothing.
  const totalOfA = async (): Promise<unknown> =>
    (
      await unwrap(
        api.GET('/data/{collection}/{indexName}/{indexValue}', {
          params: { path: { collection: 'orders', indexName: '_id', indexValue: 'a' } },
        }),
      )
    ).total;
  const dry = await collect(
    importNamespace(options, [item('a', 3)], { mode: 'upsert', dryRun: 'true' }),
  );
  assert.deepEqual(dry[0], { type: 'result', line: 1, status: 200, _id: 'a' });
  assert.equal(await totalOfA(), 1);
  const upsert = await collect(importNamespace(options, [item('a', 4)], { mode: 'upsert' }));
  const totals = upsert.at(-1);
  assert.ok(totals?.type === 'totals');
  assert.deepEqual([totals.replaced, totals.created], [1, 0]);
  assert.equal(await totalOfA(), 4);

  // The whole request refused: an ApiProblemError with the problem.
  await assert.rejects(
    collect(importNamespace({ ...options, apiKey: 'pds_not_a_key' }, [item('c', 5)])),
    (error) =>
      error instanceof ApiProblemError &&
      error.status === 401 &&
      error.problem?.code === 'UNAUTHENTICATED',
  );
  // A line break inside a line would shift every later line: the body refuses it.
  await assert.rejects(collect(importNamespace(options, ['{"type":\n"item"}'])), TypeError);
}
