// The harness's side of an export and an import: node:http clients that stream, so that the
// harness never holds an export or an import body in memory and reads as fast as the server sends.
import { createHash } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import { pipeline, Readable, Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';

const NDJSON = 'application/x-ndjson';
/** No byte for this long ends the request: the server or the database has stalled. */
const IDLE_TIMEOUT_MS = 300_000;

/** What the client read of an export. */
export interface ExportRead {
  status: number;
  /** Lines between the first (the manifest) and the last (the end record). */
  itemLines: number;
  /** Lines among them that are not item records. */
  otherLines: number;
  /** The end record, when the export ended with one. */
  end?: { items: number; sha256: string };
  /** The SHA-256 of the item lines as read equals the end record's. */
  digestMatches: boolean;
  /** Bytes on the wire (compressed, when the answer is). */
  bytes: number;
  gzip: boolean;
  problem?: string;
}

/** What the client read of an import's answer. */
export interface ImportRead {
  status: number;
  /** Result lines by status. */
  statuses: Record<string, number>;
  totals?: { outcome?: string; lines?: number; created?: number; failed?: number };
  /** Body bytes sent. */
  bytesSent: number;
  problem?: string;
}

/**
 * Splits a byte stream into lines without decoding more than it must: `each` gets every complete
 * line; the last, unterminated one is returned at the end.
 */
async function forEachLine(
  source: AsyncIterable<Buffer>,
  each: (line: Buffer) => void,
): Promise<Buffer> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    const data = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    let start = 0;
    for (let end = data.indexOf(0x0a); end !== -1; end = data.indexOf(0x0a, start)) {
      each(data.subarray(start, end));
      start = end + 1;
    }
    rest = data.subarray(start);
  }
  return rest;
}

/** The response of a request, or the error that came first. */
function responseOf(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: Readable },
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method, headers: options.headers }, resolve);
    req.setTimeout(IDLE_TIMEOUT_MS, () =>
      req.destroy(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)),
    );
    req.on('error', reject);
    if (options.body) options.body.pipe(req);
    else req.end();
  });
}

async function textOf(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8').slice(0, 300);
}

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/**
 * GET an export to its end: counts the item lines, hashes them as the end record does, and reads
 * the end record. `gzip` asks for a compressed answer (decompressed here); without it the client
 * sends no Accept-Encoding, like the baseline gets.
 */
export async function readExport(
  url: string,
  key: string,
  { gzip = false }: { gzip?: boolean } = {},
): Promise<ExportRead> {
  const read: ExportRead = {
    status: 0,
    itemLines: 0,
    otherLines: 0,
    digestMatches: false,
    bytes: 0,
    gzip: false,
  };
  try {
    const res = await responseOf(url, {
      method: 'GET',
      headers: { 'x-api-key': key, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) },
    });
    read.status = res.statusCode ?? 0;
    if (read.status !== 200) {
      read.problem = `answered ${read.status}: ${await textOf(res)}`;
      return read;
    }
    read.gzip = res.headers['content-encoding'] === 'gzip';
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        read.bytes += chunk.length;
        done(null, chunk);
      },
    });
    // pipeline: a connection cut short fails the reading instead of leaving it waiting.
    const ignore = (): void => undefined;
    const body: AsyncIterable<Buffer> = read.gzip
      ? pipeline(res, counter, createGunzip(), ignore)
      : pipeline(res, counter, ignore);
    const hash = createHash('sha256');
    let first = true;
    // A line is an item line once another follows it; the last one is the end record.
    let pending: Buffer | undefined;
    const rest = await forEachLine(body, (line) => {
      if (first) {
        first = false;
        return;
      }
      if (pending) {
        if (pending.subarray(0, 15).toString() === '{"type":"item",') read.itemLines += 1;
        else read.otherLines += 1;
        hash.update(pending);
        hash.update('\n');
      }
      pending = Buffer.from(line);
    });
    if (rest.length > 0) read.problem = 'the last line has no newline';
    const end = pending ? (JSON.parse(pending.toString('utf8')) as Record<string, unknown>) : {};
    if (end.type === 'end' && typeof end.items === 'number' && typeof end.sha256 === 'string') {
      read.end = { items: end.items, sha256: end.sha256 };
      read.digestMatches = end.sha256 === hash.digest('hex');
    } else read.problem ??= 'no end record';
  } catch (error) {
    read.problem = messageOf(error);
  }
  return read;
}

/**
 * POSTs `body` (NDJSON lines, streamed) as an import and reads the answer as it comes: a result
 * line per input line, then the totals.
 */
export async function sendImport(url: string, key: string, body: LinesBody): Promise<ImportRead> {
  const read: ImportRead = { status: 0, statuses: {}, bytesSent: 0 };
  try {
    const res = await responseOf(url, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': NDJSON },
      body: body.stream,
    });
    read.status = res.statusCode ?? 0;
    if (read.status !== 200) {
      read.problem = `answered ${read.status}: ${await textOf(res)}`;
      return read;
    }
    let last: Record<string, unknown> = {};
    const rest = await forEachLine(res, (line) => {
      last = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
      if (last.type === 'result') {
        const status = String(last.status);
        read.statuses[status] = (read.statuses[status] ?? 0) + 1;
      }
    });
    if (rest.length > 0) read.problem = 'the last line has no newline';
    if (last.type === 'totals') read.totals = last;
    else read.problem ??= 'no totals line';
  } catch (error) {
    read.problem = messageOf(error);
  }
  read.bytesSent = body.bytes();
  return read;
}

export interface LinesBody {
  stream: Readable;
  /** Bytes taken from the stream so far. */
  bytes: () => number;
}

/** `count` NDJSON lines, line(i) for each, made as they are sent, in chunks of about 64 KiB. */
export function linesBody(count: number, line: (i: number) => string): LinesBody {
  let bytes = 0;
  function* chunks(): Generator<string> {
    let chunk = '';
    for (let i = 0; i < count; i += 1) {
      chunk += `${line(i)}\n`;
      if (chunk.length >= 64 * 1024) {
        bytes += Buffer.byteLength(chunk);
        yield chunk;
        chunk = '';
      }
    }
    bytes += Buffer.byteLength(chunk);
    if (chunk) yield chunk;
  }
  return { stream: Readable.from(chunks(), { objectMode: false }), bytes: () => bytes };
}
