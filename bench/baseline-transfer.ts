// The baseline's export and import: the least a server can do to stream a collection out as the
// export's NDJSON records and to write such records in, with the driver alone — a sorted cursor
// out, insertMany in batches in. Loaded by baseline.ts; node and the driver only.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Collection, Document } from 'mongodb';

const NDJSON = 'application/x-ndjson; charset=utf-8';
/** Lines go out in chunks of about this size, as the service writes them. */
const CHUNK_CHARS = 64 * 1024;
const EXPORT_BATCH = 500;
const IMPORT_BATCH = 1000;

/** Resolves when the response takes more, or when the client has gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Writes `chunk`, waiting while the socket is full; false once the client has gone. */
async function write(res: ServerResponse, chunk: string): Promise<boolean> {
  if (!res.write(chunk)) await drained(res);
  return !res.destroyed;
}

/**
 * A manifest (with the same metadata count the service's uses), every document in `_id` order
 * through one cursor, and an end line with the count and SHA-256 of the item lines.
 */
export async function exportCollection(
  native: Collection,
  name: string,
  res: ServerResponse,
): Promise<void> {
  const stats = await native
    .aggregate<{ count?: number }>([{ $collStats: { count: {} } }])
    .toArray();
  const count = stats.reduce((sum, shard) => sum + (shard.count ?? 0), 0);
  res.writeHead(200, { 'content-type': NDJSON });
  let chunk = `${JSON.stringify({ type: 'manifest', format: 1, collections: [{ name, count }] })}\n`;
  const hash = createHash('sha256');
  let items = 0;
  const cursor = native.find({}).sort({ _id: 1 }).batchSize(EXPORT_BATCH);
  try {
    for await (const item of cursor) {
      const line = JSON.stringify({ type: 'item', collection: name, item });
      hash.update(line);
      hash.update('\n');
      items += 1;
      chunk += `${line}\n`;
      if (chunk.length >= CHUNK_CHARS) {
        if (!(await write(res, chunk))) return;
        chunk = '';
      }
    }
  } finally {
    await cursor.close();
  }
  res.end(`${chunk}${JSON.stringify({ type: 'end', items, sha256: hash.digest('hex') })}\n`);
}

/**
 * Item records of the body into `native`, IMPORT_BATCH documents per insertMany, reading the
 * body only as fast as the writes go; a result line per item line after each batch, then the
 * totals, in the service's format. Lines that are not items (the benchmark sends none) count as
 * failed, without a result line.
 */
export async function importInto(
  native: Collection,
  req: IncomingMessage,
  res: ServerResponse,
  toDocument: (item: Record<string, unknown>) => Document,
): Promise<void> {
  res.writeHead(200, { 'content-type': NDJSON });
  let lines = 0;
  let created = 0;
  let failed = 0;
  let batch: { line: number; doc: Document }[] = [];
  const take = (text: string): void => {
    if (text === '') return;
    lines += 1;
    try {
      const record = JSON.parse(text) as { type?: unknown; item?: Record<string, unknown> };
      if (record.type === 'item' && typeof record.item === 'object' && record.item !== null) {
        batch.push({ line: lines, doc: toDocument(record.item) });
        return;
      }
    } catch {
      // Not JSON: failed, like any line that is not an item.
    }
    failed += 1;
  };
  const flush = async (): Promise<boolean> => {
    if (batch.length === 0) return true;
    let status = 201;
    try {
      await native.insertMany(
        batch.map((b) => b.doc),
        { ordered: false },
      );
      created += batch.length;
    } catch {
      // The whole batch counts as failed: the benchmark sends only new ids.
      failed += batch.length;
      status = 500;
    }
    const results = batch.map(
      ({ line, doc }) =>
        `${JSON.stringify({ type: 'result', line, status, _id: doc._id as unknown })}\n`,
    );
    batch = [];
    return write(res, results.join(''));
  };
  let rest = '';
  req.setEncoding('utf8');
  for await (const chunk of req as AsyncIterable<string>) {
    const split = (rest + chunk).split('\n');
    rest = split.pop() ?? '';
    for (const text of split) {
      take(text);
      if (batch.length >= IMPORT_BATCH && !(await flush())) return;
    }
  }
  take(rest);
  if (!(await flush())) return;
  const totals = { type: 'totals', outcome: 'complete', lines, created, replaced: 0, failed };
  res.end(`${JSON.stringify(totals)}\n`);
}
