import type { components, operations } from './schema.js';
import {
  ApiProblemError,
  apiHeaders,
  baseUrlOf,
  problemErrorOf,
  serializeQuery,
  type ApiClientOptions,
} from './http.js';
import { bodyLines, NDJSON, parseLine, requestBody, TransferError } from './ndjson.js';
import { Sha256 } from './sha256.js';

export { TransferError } from './ndjson.js';

type Schemas = components['schemas'];

/**
 * The records of an export, one per line: a manifest, items by collection then `_id`, then each
 * file (a `file` line and its `file-chunk` lines, base64), an end.
 */
export type ExportRecord =
  | Schemas['ExportManifestDto']
  | Schemas['ExportItemRecordDto']
  | Schemas['ExportFileRecordDto']
  | Schemas['ExportFileChunkRecordDto']
  | Schemas['ExportEndRecordDto'];

/** What POST /import answers: a result per input line, then the totals. */
export type ImportLine = Schemas['ImportResultLineDto'] | Schemas['ImportTotalsDto'];

export type ExportQuery = NonNullable<operations['exportNamespace']['parameters']['query']>;
export type ImportQuery = NonNullable<operations['importNamespace']['parameters']['query']>;

export interface TransferOptions extends ApiClientOptions {
  /** Stops the transfer: the request is aborted and the iteration throws. */
  signal?: AbortSignal;
}

export interface ExportOptions extends TransferOptions {
  /** How many times in a row a cut download is resumed with no new item in between (default 3). */
  retries?: number;
  /** The wait before a resume, doubled for each further one in a row (default 500 ms). */
  retryDelayMs?: number;
}

const NEWLINE = Uint8Array.of(0x0a);

/**
 * GET /export as typed records, read line by line as the body arrives: the manifest, every item,
 * every file with its chunks, and an end record that counts and digests all of them, as the end
 * line of an export that was never cut would. Each response's end line is checked (line count and
 * SHA-256 of the lines between manifest and end); a mismatch is a TransferError `mismatch`. A
 * download cut short (a network error, or a body that ends without its end line) is resumed
 * after the last item received (`after=<collection>/<_id>`) or the last file received whole
 * (`after=~files/<id>`); a file cut part-way is sent again whole, and the lines of it already
 * given are skipped, so each line comes once. `retries` cuts in a row end it with a
 * TransferError `cut`.
 * A refusal (401, 403, 404 COLLECTION_NOT_FOUND, 400) is an ApiProblemError.
 *
 * The records can go straight into `importNamespace`. Runs on Node ≥ 20 and in browsers.
 *
 * ```ts
 * for await (const record of exportNamespace({ baseUrl, apiKey }, { collections: 'orders' }))
 *   if (record.type === 'item') console.log(record.collection, record.item._id);
 * ```
 */
export async function* exportNamespace(
  options: ExportOptions,
  query: ExportQuery = {},
): AsyncGenerator<ExportRecord, void, undefined> {
  const retries = options.retries ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 500;
  const all = new Sha256();
  let total = 0;
  let manifestGiven = false;
  let after = query.after;
  let cutsInARow = 0;
  let files = 0;
  /** The file whose lines are arriving: its id and the chunk lines given so far. */
  let file: { id: string; chunks: number } | undefined;
  /** After a cut inside a file: its lines given before the cut, which the resumed body repeats. */
  let repeated: { id: string; chunks: number } | undefined;
  for (;;) {
    const resumed = after === undefined ? query : { ...query, after };
    const opened = await network(options, () =>
      openLines(options, transferRequest(options, 'GET', '/export', resumed)),
    );
    let cut: unknown = opened.ok ? undefined : opened.cause;
    if (opened.ok) {
      const lines = opened.value;
      const part = new Sha256();
      let items = 0;
      try {
        for (;;) {
          const next = await network(options, () => lines.next());
          if (!next.ok || next.value.done) {
            cut = next.ok ? new Error('The export ended without its end line.') : next.cause;
            break;
          }
          const bytes = next.value.value;
          const record = exportRecordOf(parseLine(bytes));
          if (record.type === 'manifest') {
            // A resumed response has a manifest of its own: the first one describes the export.
            if (!manifestGiven) yield record;
            manifestGiven = true;
            continue;
          }
          if (record.type === 'end') {
            checkEnd(record, items, part.hex());
            const whole = { ...record, items: total, sha256: all.hex() };
            yield record.files === undefined ? whole : { ...whole, files: files };
            return;
          }
          part.update(bytes).update(NEWLINE);
          items += 1;
          if (isRepeat(record, repeated)) continue;
          repeated = undefined;
          if (record.type !== 'file-chunk') {
            // The file before this line arrived whole: a resume may start after it.
            if (file) after = `~files/${file.id}`;
            file = undefined;
          }
          if (record.type === 'item') after = `${record.collection}/${record.item._id}`;
          else if (record.type === 'file') {
            file = { id: record.file.id, chunks: 0 };
            files += 1;
          } else if (file) file.chunks += 1;
          all.update(bytes).update(NEWLINE);
          total += 1;
          cutsInARow = 0;
          yield record;
        }
      } finally {
        await lines.return(undefined);
      }
    }
    // A file cut part-way comes again whole: its lines given already are skipped then.
    if (file) repeated = { ...file };
    if (cutsInARow >= retries)
      throw new TransferError(
        'cut',
        `The export was cut ${cutsInARow + 1} times in a row with no new item (the last: ${after ?? 'none'}).`,
        { cause: cut },
      );
    cutsInARow += 1;
    await new Promise((resume) => setTimeout(resume, retryDelayMs * 2 ** (cutsInARow - 1)));
  }
}

/**
 * POST /import: sends `records` (export records, or lines as strings) as a streamed request body
 * while it reads them, and yields the typed result of each line as it arrives, then the totals
 * last. A line's failure is its result (`status` 400, 409, …), and the import goes on. A refusal of
 * the whole request (401, 403, 413, 415, 400) is an ApiProblemError; a response that ends before
 * its totals is a TransferError `cut` (an import is not resumed: with `mode: 'upsert'`, sending
 * an export again is safe); what `records` throws is thrown as it is.
 *
 * The body is streamed (`duplex: 'half'`), a line at a time as `records` gives it: Node ≥ 20's
 * fetch does this over HTTP/1.1; among browsers, only Chromium's does, and over HTTP/2 only.
 *
 * ```ts
 * for await (const line of importNamespace(target, exportNamespace(source), { mode: 'upsert' }))
 *   if (line.type === 'totals') console.log(line.outcome, line.created, line.failed);
 *   else if (line.status >= 400) console.warn(line.line, line.code, line.detail);
 * ```
 */
export async function* importNamespace(
  options: TransferOptions,
  records: AsyncIterable<ExportRecord | string> | Iterable<ExportRecord | string>,
  query: ImportQuery = {},
): AsyncGenerator<ImportLine, void, undefined> {
  const source = requestBody(records);
  // When `records` threw, the request failed for the caller's reason, not the network's.
  const failure = (error: unknown): unknown => source.failure() ?? error;
  try {
    const request = transferRequest(options, 'POST', '/import', query, source.body);
    const lines = await openLines(options, request).catch((error: unknown) => {
      throw failure(error);
    });
    try {
      for (;;) {
        const next = await lines.next().catch((error: unknown) => {
          throw failure(options.signal?.aborted ? error : cutImport(error));
        });
        if (next.done) throw failure(cutImport(undefined));
        const line = importLineOf(parseLine(next.value));
        yield line;
        if (line.type === 'totals') return;
      }
    } finally {
      await lines.return(undefined);
    }
  } finally {
    source.stop();
  }
}

function cutImport(cause: unknown): TransferError {
  return new TransferError('cut', 'The import answer ended before its totals.', { cause });
}

function transferRequest(
  options: TransferOptions,
  method: 'GET' | 'POST',
  path: '/export' | '/import',
  query: ExportQuery | ImportQuery,
  body?: ReadableStream<Uint8Array>,
): Request {
  const search = serializeQuery(query);
  return new Request(`${baseUrlOf(options)}${path}${search ? `?${search}` : ''}`, {
    method,
    headers: {
      ...apiHeaders(options),
      Accept: NDJSON,
      ...(body ? { 'Content-Type': NDJSON } : {}),
    },
    ...(body ? { body, duplex: 'half' } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** The answer's lines, once it is a 200; any other status is an ApiProblemError. */
async function openLines(
  options: TransferOptions,
  request: Request,
): Promise<AsyncGenerator<Uint8Array, void, undefined>> {
  const response = await (options.fetch ?? fetch)(request);
  if (response.status !== 200) throw await problemErrorOf(response);
  if (!response.body) throw new TransferError('malformed', 'The answer has no body.');
  return bodyLines(response.body);
}

/**
 * A network step of an export: its value, or the failure that cuts the download. Refusals, bad
 * records and the caller's abort are not cuts: they are thrown.
 */
async function network<T>(
  options: TransferOptions,
  step: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; cause: unknown }> {
  try {
    return { ok: true, value: await step() };
  } catch (error) {
    if (
      error instanceof ApiProblemError ||
      error instanceof TransferError ||
      options.signal?.aborted
    )
      throw error;
    return { ok: false, cause: error };
  }
}

function checkEnd(end: Schemas['ExportEndRecordDto'], items: number, sha256: string): void {
  if (end.items !== items || end.sha256 !== sha256)
    throw new TransferError(
      'mismatch',
      `The end line counts ${end.items} items with SHA-256 ${end.sha256}; ${items} came, with SHA-256 ${sha256}.`,
    );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether a line of a resumed body repeats what was given before the cut: the line of the file
 * that was cut, or one of its chunks given then.
 */
function isRepeat(
  record: ExportRecord,
  repeated: { id: string; chunks: number } | undefined,
): boolean {
  if (!repeated) return false;
  if (record.type === 'file') return record.file.id === repeated.id;
  return record.type === 'file-chunk' && record.id === repeated.id && record.n < repeated.chunks;
}

/** The members of a record this client relies on are checked, not trusted. */
function exportRecordOf(value: unknown): ExportRecord {
  if (
    isObject(value) &&
    (isManifest(value) || isItem(value) || isFile(value) || isFileChunk(value) || isEnd(value))
  )
    return value;
  throw new TransferError('malformed', 'A line of the export is not a record of format 1.');
}

function isFile(value: Record<string, unknown>): value is Schemas['ExportFileRecordDto'] {
  return value.type === 'file' && isObject(value.file) && typeof value.file.id === 'string';
}

function isFileChunk(value: Record<string, unknown>): value is Schemas['ExportFileChunkRecordDto'] {
  return (
    value.type === 'file-chunk' &&
    typeof value.id === 'string' &&
    typeof value.n === 'number' &&
    typeof value.data === 'string'
  );
}

function isManifest(value: Record<string, unknown>): value is Schemas['ExportManifestDto'] {
  return value.type === 'manifest' && value.format === 1 && Array.isArray(value.collections);
}

function isItem(value: Record<string, unknown>): value is Schemas['ExportItemRecordDto'] {
  return (
    value.type === 'item' &&
    typeof value.collection === 'string' &&
    isObject(value.item) &&
    typeof value.item._id === 'string'
  );
}

function isEnd(value: Record<string, unknown>): value is Schemas['ExportEndRecordDto'] {
  return (
    value.type === 'end' && typeof value.items === 'number' && typeof value.sha256 === 'string'
  );
}

function importLineOf(value: unknown): ImportLine {
  if (isObject(value) && (isResult(value) || isTotals(value))) return value;
  throw new TransferError(
    'malformed',
    'A line of the import answer is not a result or the totals.',
  );
}

function isResult(value: Record<string, unknown>): value is Schemas['ImportResultLineDto'] {
  return (
    value.type === 'result' && typeof value.line === 'number' && typeof value.status === 'number'
  );
}

function isTotals(value: Record<string, unknown>): value is Schemas['ImportTotalsDto'] {
  return (
    value.type === 'totals' &&
    (value.outcome === 'complete' || value.outcome === 'stopped') &&
    typeof value.lines === 'number' &&
    typeof value.created === 'number' &&
    typeof value.replaced === 'number' &&
    typeof value.failed === 'number'
  );
}
