// The baseline: the least a server can do to answer the same item routes. node:http and the
// native driver on the same databases and physical collections as the service, with the same
// auth as the service: the key's SHA-256 digest looked up in `api_keys`, and kept in a bounded
// cache for BASELINE_KEY_CACHE_MS (the service's API_KEY_CACHE_MS default, 5 s, and its size,
// 10,000 keys) so that a request costs only its own commands; 0 looks the key up every time (the
// baseline before it had the cache).
// The service's throughput is reported as a ratio of this one's.
//
// Environment: PORT and those of baseline-core.ts (the connection, the key cache and the
// collections, shared with the framework floor, baseline-nest.ts). Only types are imported from
// the harness: at run time this process loads node:http, the driver, lru-cache, its own NDJSON
// streaming (baseline-transfer.ts) and its GridFS routes (baseline-files.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { ObjectId, type Document, type Filter } from 'mongodb';
import {
  authenticate,
  client,
  collectionOf,
  countRequest,
  HttpError,
  idValue,
  isDuplicateKey,
  metricsText,
  newDocument,
  type Entry,
} from './baseline-core';
import { deleteFile, downloadFile, uploadFile } from './baseline-files';
import { exportCollection, importInto } from './baseline-transfer';

const BODY_LIMIT = 1024 * 1024;
const LIST_LIMIT_DEFAULT = 50;
const LIST_LIMIT_MAX = 500;
/** The service's BULK_MAX_ITEMS default. */
const BULK_MAX = 500;
const RESERVED = new Set(['authField']);

function send(res: ServerResponse, status: number, value?: unknown): void {
  if (value === undefined) {
    res.writeHead(status).end();
    return;
  }
  const json = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) reject(new HttpError(413, 'body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new HttpError(400, 'invalid JSON'));
      }
    });
    req.on('error', reject);
  });
}

function propOf(body: object, key: string): unknown {
  return (body as Record<string, unknown>)[key];
}

/** Query-string equality as the SPEC has it: "5" matches "5" and 5, "true" true, "null" null. */
function queryValue(raw: string): unknown {
  const candidates: unknown[] = [raw];
  if (raw.trim() !== '' && Number.isFinite(Number(raw))) candidates.push(Number(raw));
  if (raw === 'true' || raw === 'false') candidates.push(raw === 'true');
  if (raw === 'null') candidates.push(null);
  return candidates.length === 1 ? raw : { $in: candidates };
}

/**
 * List parameters as the service reads them, for the one sort the benchmark uses (`_id`, in
 * either order, default descending) and its keyset cursor after[_id] / before[_id].
 */
function listQuery(
  entry: Entry,
  searchParams: URLSearchParams,
): { filter: Filter<Document>; limit: number; sort: { _id: 1 | -1 } } {
  const filter: Filter<Document> = {};
  const range: Record<string, ObjectId | string> = {};
  let limit = LIST_LIMIT_DEFAULT;
  let direction: 1 | -1 = -1;
  const cursors: [1 | -1, ObjectId | string][] = [];
  for (const [key, value] of searchParams) {
    if (key === 'limit') {
      limit = Number(value);
      if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX)
        throw new HttpError(400, 'limit');
    } else if (key === 'sortOrder') {
      if (value !== 'asc' && value !== 'desc') throw new HttpError(400, 'sortOrder');
      direction = value === 'asc' ? 1 : -1;
    } else if (key === 'sort') {
      if (value !== '_id') throw new HttpError(400, 'the baseline sorts by _id only');
    } else if (key === 'after[_id]' || key === 'before[_id]') {
      cursors.push([key.startsWith('after') ? 1 : -1, idValue(entry, value)]);
    } else if (RESERVED.has(key)) {
      // authField: the benchmark's root caller is not confined.
    } else if (RANGE_KEY.test(key)) {
      // A numeric range, the one operator form the benchmark sends: n[gte]=…&n[lt]=….
      const [, field = '', op = ''] = RANGE_KEY.exec(key) ?? [];
      const bound = Number(value);
      if (!Number.isFinite(bound)) throw new HttpError(400, key);
      const current: unknown = filter[field];
      const bounds = typeof current === 'object' && current !== null ? (current as Document) : {};
      filter[field] = { ...bounds, [`$${op}`]: bound };
    } else {
      const field = /^filter\[(.+)\]$/.exec(key)?.[1] ?? key;
      filter[field] = queryValue(value);
    }
  }
  // "after" is later in the sort order: greater ids ascending, smaller ids descending.
  for (const [side, id] of cursors) range[side * direction > 0 ? '$gt' : '$lt'] = id;
  if (cursors.length > 0) filter._id = range;
  return { filter, limit, sort: { _id: direction } };
}

const RANGE_KEY = /^(?:filter\[)?([^[\]]+?)\]?\[(gt|gte|lt|lte)\]$/;
const AGGREGATE_PARAMS = new Set(['groupBy', 'op', 'field']);
const MAX_GROUPS = 1000;

/** GET /data/{c}/aggregate?groupBy=…&op=count|sum&field=…: the service's pipeline, no checks. */
async function aggregate(entry: Entry, searchParams: URLSearchParams): Promise<unknown> {
  const params = new URLSearchParams(
    [...searchParams].filter(([key]) => !AGGREGATE_PARAMS.has(key)),
  );
  const { filter } = listQuery(entry, params);
  const groupBy = searchParams.get('groupBy') ?? '';
  const op = searchParams.get('op') ?? 'count';
  const accumulator =
    op === 'count' ? { $sum: 1 } : { [`$${op}`]: `$${searchParams.get('field')}` };
  const rows = await entry.native
    .aggregate([
      { $match: filter },
      { $group: { _id: `$${groupBy}`, value: accumulator } },
      { $sort: { _id: 1 } },
      { $limit: MAX_GROUPS + 1 },
    ])
    .toArray();
  return {
    groups: rows
      .slice(0, MAX_GROUPS)
      .map((row) => ({ key: (row._id as unknown) ?? null, value: row.value as unknown })),
    truncated: rows.length > MAX_GROUPS,
  };
}

/** GET /transfer/export/{c} and POST /transfer/import/{c}: the bare counterparts of /export and /import. */
async function transfer(
  req: IncomingMessage,
  res: ServerResponse,
  segments: string[],
): Promise<void> {
  const principal = await authenticate(req);
  const entry = collectionOf(segments[2]);
  if (!entry || segments.length !== 3) throw new HttpError(404, 'no route');
  if (segments[1] === 'export' && req.method === 'GET')
    return exportCollection(entry.native, entry.name, res);
  if (segments[1] === 'import' && req.method === 'POST')
    return importInto(entry.native, req, res, (item) => {
      // The kept times, as the service's import keeps them.
      const { _createdAt, _updatedAt, ...fields } = item;
      const at = typeof _createdAt === 'string' ? new Date(_createdAt) : undefined;
      const doc = newDocument(entry, principal, fields, at);
      if (typeof _updatedAt === 'string') doc._updatedAt = new Date(_updatedAt);
      return doc;
    });
  throw new HttpError(404, 'no route');
}

const DATABASE_NAME = /^[A-Za-z0-9_-]{1,63}$/;
const FILE_ID = /^[0-9a-f]{24}$/;

/**
 * POST /gridfs/{database}?name=, GET and DELETE /gridfs/{database}/{id}: the bare counterparts of
 * POST /files and GET /files/{id}/content, in the database named (the service's tenant database).
 */
async function gridfs(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  segments: string[],
): Promise<void> {
  await authenticate(req);
  const [, database = '', id] = segments;
  if (!DATABASE_NAME.test(database) || segments.length > 3) throw new HttpError(404, 'no route');
  if (id === undefined && req.method === 'POST')
    return uploadFile(client, database, url.searchParams.get('name') ?? 'file', req, res);
  if (id === undefined || !FILE_ID.test(id)) throw new HttpError(404, 'no route');
  if (req.method === 'GET') return downloadFile(client, database, id, res);
  if (req.method === 'DELETE') return deleteFile(client, database, id, res);
  throw new HttpError(404, 'no route');
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://baseline');
  if (url.pathname === '/health') return send(res, 200, { status: 'ok' });
  if (url.pathname === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(metricsText());
    return;
  }
  const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (segments[0] === 'transfer') return transfer(req, res, segments);
  if (segments[0] === 'gridfs') return gridfs(req, res, url, segments);
  if (segments[0] !== 'data' || segments.length < 2) throw new HttpError(404, 'no route');
  const principal = await authenticate(req);
  const entry = collectionOf(segments[1]);

  if (segments.length === 2 && req.method === 'GET') {
    if (!entry) return send(res, 204);
    const { filter, limit, sort } = listQuery(entry, url.searchParams);
    const items = await entry.native.find(filter).sort(sort).limit(limit).toArray();
    return items.length === 0 ? send(res, 204) : send(res, 200, items);
  }
  if (segments.length === 3 && segments[2] === 'aggregate' && req.method === 'GET') {
    if (!entry) return send(res, 200, { groups: [], truncated: false });
    return send(res, 200, await aggregate(entry, url.searchParams));
  }
  if (segments.length === 3 && segments[2] === 'count' && req.method === 'GET') {
    if (!entry) return send(res, 200, { count: 0 });
    const { filter } = listQuery(entry, url.searchParams);
    // The same metadata count as the service (see DataItemRepository.estimatedCount).
    const count =
      Object.keys(filter).length === 0
        ? (
            await entry.native
              .aggregate<{ count?: number }>([{ $collStats: { count: {} } }])
              .toArray()
          ).reduce((sum, shard) => sum + (shard.count ?? 0), 0)
        : await entry.native.countDocuments(filter);
    return send(res, 200, { count });
  }
  if (segments.length === 2 && req.method === 'POST') {
    if (!entry) throw new HttpError(404, 'unknown collection');
    const body = await readBody(req);
    const item = typeof body === 'object' && body !== null ? propOf(body, 'item') : undefined;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new HttpError(400, 'item');
    const doc = newDocument(entry, principal, item as Record<string, unknown>);
    try {
      await entry.native.insertOne(doc);
    } catch (error) {
      if (isDuplicateKey(error)) throw new HttpError(409, 'duplicate');
      throw error;
    }
    return send(res, 200, doc);
  }
  if (segments.length === 3 && segments[2] === 'bulk' && req.method === 'POST') {
    if (!entry) throw new HttpError(404, 'unknown collection');
    const body = await readBody(req);
    const items = typeof body === 'object' && body !== null ? propOf(body, 'items') : undefined;
    if (!Array.isArray(items) || items.length === 0 || items.length > BULK_MAX)
      throw new HttpError(400, 'items');
    const at = new Date();
    const docs = items.map((item: unknown) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item))
        throw new HttpError(400, 'item');
      return newDocument(entry, principal, item as Record<string, unknown>, at);
    });
    // Unordered, as the service's: one item's failure does not stop the others.
    const failedAt = new Set<number>();
    try {
      await entry.native.insertMany(docs, { ordered: false });
    } catch (error) {
      const writeErrors = (error as { writeErrors?: { index: number }[] }).writeErrors;
      if (!writeErrors) throw error;
      for (const { index } of writeErrors) failedAt.add(index);
    }
    return send(res, 200, {
      results: docs.map((doc, index) =>
        failedAt.has(index) ? { index, status: 409 } : { index, status: 200, _id: doc._id },
      ),
      created: docs.length - failedAt.size,
      failed: failedAt.size,
    });
  }
  if (segments.length === 4 && (req.method === 'GET' || req.method === 'PUT')) {
    if (!entry) throw new HttpError(404, 'no such item');
    const [, , field = '', raw = ''] = segments;
    const filter: Filter<Document> = {
      [field]: field === '_id' ? idValue(entry, raw) : queryValue(raw),
    };
    if (req.method === 'GET') {
      const item = await entry.native.findOne(filter);
      if (!item) throw new HttpError(404, 'no such item');
      return send(res, 200, item);
    }
    const body = await readBody(req);
    const values = typeof body === 'object' && body !== null ? propOf(body, 'values') : undefined;
    if (typeof values !== 'object' || values === null || Object.keys(values).length === 0) {
      throw new HttpError(400, 'values');
    }
    // Same rule as the service: exactly one match, else 404/409, and nothing changes.
    const matches = await entry.native
      .find(filter, { projection: { _id: 1 } })
      .limit(2)
      .toArray();
    const [match] = matches;
    if (!match) throw new HttpError(404, 'no such item');
    if (matches.length > 1) throw new HttpError(409, 'ambiguous');
    const updated = await entry.native.findOneAndUpdate(
      { _id: match._id },
      { $set: { ...values, _updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (!updated) throw new HttpError(404, 'no such item');
    return send(res, 200, updated);
  }
  throw new HttpError(404, 'no route');
}

let stopping = false;
const server = createServer((req, res) => {
  countRequest(req, res);
  handle(req, res).catch((error: unknown) => {
    if (error instanceof HttpError)
      send(res, error.status, { status: error.status, detail: error.message });
    else if (stopping) res.destroy();
    else {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      send(res, 500, { status: 500 });
    }
  });
});
server.keepAliveTimeout = 65_000;

async function main(): Promise<void> {
  await client.connect();
  const port = Number(process.env.PORT);
  server.listen(port, '127.0.0.1', () => process.stdout.write(`baseline listening on ${port}\n`));
}

function shutdown(): void {
  stopping = true;
  server.close();
  server.closeAllConnections();
  void client.close().finally(() => process.exit(0));
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
