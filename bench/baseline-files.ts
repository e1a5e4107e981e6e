// The baseline's file routes: the least a server can do to store a request body in GridFS and to
// stream it back, with the driver's GridFSBucket alone (openUploadStream, openDownloadStream) in
// the database the request names: the service's tenant database, so both write to the same
// place. Loaded by baseline.ts; node and the driver only.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { GridFSBucket, ObjectId, type MongoClient } from 'mongodb';

/** A bucket of its own next to the service's `files`, with the same chunk size (255 KiB). */
const BUCKET = 'bench_files';
const CHUNK_BYTES = 255 * 1024;

function bucketOf(client: MongoClient, database: string): GridFSBucket {
  return new GridFSBucket(client.db(database), { bucketName: BUCKET, chunkSizeBytes: CHUNK_BYTES });
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** POST …?name=: the body, as it arrives, into one GridFS file; answers its id and size. */
export async function uploadFile(
  client: MongoClient,
  database: string,
  name: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const upload = bucketOf(client, database).openUploadStream(name, {
    metadata: { contentType: req.headers['content-type'] ?? 'application/octet-stream' },
  });
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
  });
  await pipeline(req, upload);
  json(res, 201, { id: upload.id.toHexString(), size });
}

/** GET …/{id}: the file's bytes, its length from the files document the download reads first. */
export async function downloadFile(
  client: MongoClient,
  database: string,
  id: string,
  res: ServerResponse,
): Promise<void> {
  const download = bucketOf(client, database).openDownloadStream(new ObjectId(id));
  download.once('file', (file: { length: number }) => {
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': file.length,
    });
  });
  try {
    await pipeline(download, res);
  } catch (error) {
    if (res.headersSent) throw error;
    json(res, 404, { status: 404, detail: 'no such file' });
  }
}

/** DELETE …/{id}: the file and its chunks (between rounds, not measured). */
export async function deleteFile(
  client: MongoClient,
  database: string,
  id: string,
  res: ServerResponse,
): Promise<void> {
  await bucketOf(client, database).delete(new ObjectId(id));
  res.writeHead(204).end();
}
