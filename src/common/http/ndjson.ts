import type { Request, Response } from 'express';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createGzip, createInflate } from 'node:zlib';
import { heapGrowthBound } from '../memory/heap-growth';

/** Newline-delimited JSON: one JSON value per line (export files, import bodies and results). */
export const NDJSON = 'application/x-ndjson';

/** Lines are written in chunks of about this size: one socket write per chunk, not per line. */
const CHUNK_CHARS = 64 * 1024;

/**
 * An answer longer than this, in characters, is a long stream (an export, an import's results):
 * the heap's growth is bounded while it runs (src/common/memory/heap-growth.ts). A short one
 * never pays the full collection that starts the bound.
 */
const LONG_STREAM_CHARS = 128 * 1024;

/** Whether the client takes a gzip-encoded response (Accept-Encoding, q-values honoured). */
function acceptsGzip(req: Request): boolean {
  return req.acceptsEncodings('gzip', 'identity') === 'gzip';
}

/**
 * Answers 200 with `lines` as NDJSON, gzip-encoded when `compress` and the client accepts it,
 * as the client reads it: the next line is produced only when the socket has taken the last
 * chunk, so memory stays flat however many lines follow. The first line is produced before
 * anything is sent: its failure is still a problem response with its own status. A later failure
 * (or the client going away) ends the iteration (its `finally` blocks run) and cuts the
 * connection without the last chunk, so an HTTP client sees an incomplete response, never a
 * complete-looking one. Past LONG_STREAM_CHARS the heap's growth is bounded until the end.
 */
export async function sendLines(
  req: Request,
  res: Response,
  lines: AsyncIterable<string>,
  {
    compress = true,
    chunkChars = CHUNK_CHARS,
    signal,
  }: {
    compress?: boolean;
    /** Lines are written once this many characters are ready; 0: each line as it comes. */
    chunkChars?: number;
    /** Cuts the response when aborted (the instance shutting down): the client sees the cut. */
    signal?: AbortSignal;
  } = {},
): Promise<void> {
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  const gzip = compress && acceptsGzip(req);
  res.status(200);
  res.setHeader('Content-Type', `${NDJSON}; charset=utf-8`);
  if (compress) res.setHeader('Vary', 'Accept-Encoding');
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  // Whatever follows is streamed: a proxy must not wait for the whole body.
  res.setHeader('X-Accel-Buffering', 'no');
  async function* chunks(): AsyncGenerator<string> {
    let chunk = first.done ? '' : `${first.value}\n`;
    let sent = 0;
    let releaseHeap: (() => void) | null = null;
    try {
      if (chunk.length >= chunkChars) {
        yield chunk;
        chunk = '';
      }
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        chunk += `${next.value}\n`;
        if (releaseHeap === null && (sent += next.value.length) > LONG_STREAM_CHARS)
          releaseHeap = heapGrowthBound.hold();
        if (chunk.length >= chunkChars) {
          yield chunk;
          chunk = '';
        }
      }
      if (chunk.length > 0) yield chunk;
    } finally {
      releaseHeap?.();
      await iterator.return?.();
    }
  }
  const source = Readable.from(chunks(), { objectMode: false });
  // The response itself goes: the source's own destroy waits for a read under way to end.
  const cut = () => res.destroy();
  // Aborted while the first line was made: cut as soon as the answer has begun.
  if (signal?.aborted) cut();
  else signal?.addEventListener('abort', cut, { once: true });
  try {
    if (gzip) await pipeline(source, createGzip(), res);
    else await pipeline(source, res);
  } catch {
    // pipeline has destroyed the response: the client sees the cut.
  } finally {
    signal?.removeEventListener('abort', cut);
  }
}

/** A line of a request body, or a line longer than the bound (its text is not kept). */
export type BodyLine = { text: string; bytes: Buffer } | { tooLong: number };

/** The body went past its byte bound, or its encoding could not be decoded. */
export class BodyStreamError extends Error {
  constructor(
    readonly reason: 'too-large' | 'bad-encoding',
    message: string,
    /** The decoded bytes read when the body went past its bound ('too-large'). */
    readonly bytes = 0,
  ) {
    super(message);
    this.name = 'BodyStreamError';
  }
}

/** The decoder of a Content-Encoding the body middleware lets through (src/common/http/body.ts). */
function decoderOf(encoding: string): Transform | null {
  switch (encoding) {
    case 'gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return null;
  }
}

/**
 * The lines of a request body as they arrive, those completed by one decoded chunk together (a
 * consumer takes them without waiting for each), decoded per Content-Encoding: split at `\n` (a
 * trailing `\r` dropped), each at most `maxLineBytes` (a longer one is reported by its length and
 * skipped, without holding it), the whole decoded body at most `maxBytes` (BodyStreamError
 * 'too-large'). A body that does not decode throws BodyStreamError 'bad-encoding'. Reading
 * pauses while the consumer is busy: the client's sending is held back by TCP, not buffered.
 */
export async function* readBodyLines(
  req: Request,
  { maxLineBytes, maxBytes }: { maxLineBytes: number; maxBytes: number },
): AsyncGenerator<BodyLine[]> {
  const encoding = (req.headers['content-encoding'] || 'identity').toLowerCase();
  const decoder = decoderOf(encoding);
  const source: AsyncIterable<Buffer> = decoder ? req.pipe(decoder) : req;
  if (decoder) req.once('error', (error) => decoder.destroy(error));
  let total = 0;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let overLong = 0;
  try {
    for await (const chunk of source) {
      total += chunk.length;
      if (total > maxBytes)
        throw new BodyStreamError(
          'too-large',
          `The body decodes to more than ${maxBytes} bytes.`,
          total,
        );
      const lines: BodyLine[] = [];
      let start = 0;
      for (;;) {
        const end = chunk.indexOf(0x0a, start);
        const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
        if (overLong > 0 || partBytes + piece.length > maxLineBytes) {
          overLong = (overLong || partBytes) + piece.length;
          parts = [];
          partBytes = 0;
        } else if (piece.length > 0) {
          parts.push(piece);
          partBytes += piece.length;
        }
        if (end === -1) break;
        lines.push(overLong > 0 ? { tooLong: overLong } : lineOf(Buffer.concat(parts, partBytes)));
        parts = [];
        partBytes = 0;
        overLong = 0;
        start = end + 1;
      }
      if (lines.length > 0) yield lines;
    }
  } catch (error) {
    if (error instanceof BodyStreamError) throw error;
    if (decoder && isDecodeError(error))
      throw new BodyStreamError('bad-encoding', `The body is not valid ${encoding}.`);
    throw error;
  }
  if (overLong > 0) yield [{ tooLong: overLong }];
  else if (partBytes > 0) yield [lineOf(Buffer.concat(parts, partBytes))];
}

function lineOf(bytes: Buffer): BodyLine {
  const trimmed = bytes.at(-1) === 0x0d ? bytes.subarray(0, -1) : bytes;
  return { text: trimmed.toString('utf8'), bytes: trimmed };
}

/** zlib's errors for input that is not what its Content-Encoding says. */
function isDecodeError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}
