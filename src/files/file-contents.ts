import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GridFSBucket, ObjectId, type Db } from 'mongodb';
import { GarbageCadence } from '../common/memory/garbage-collection';
import { DataClusters } from '../placement';
import type { FileRecord } from './file-records.repository';

/** The GridFS bucket of every tenant database: collections `files.files` and `files.chunks`. */
export const FILE_BUCKET = 'files';
/** GridFS's usual chunk size: 255 KiB, under every server's document limit with room to spare. */
const CHUNK_BYTES = 255 * 1024;

/**
 * How many bytes an upload streams between two collections of its short-lived Buffers: without
 * them a 50 MB upload holds some 35 MiB of garbage at its peak, with them about 10.
 */
const GARBAGE_EVERY_BYTES = 2 * 1024 * 1024;

/** A body grew past FILE_MAX_BYTES while it was read. */
export class FileTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the file exceeds ${limitBytes} bytes`);
    this.name = 'FileTooLargeError';
  }
}

export interface WriteOptions {
  maxBytes: number;
  /**
   * Called before more bytes are passed on, with the total so far; the bytes wait for it (an
   * upload without Content-Length reserves its quota as it grows). Throwing stops the upload.
   */
  grow?: (total: number) => Promise<void>;
}

/**
 * The bytes of files: GridFS in the tenant's database, wherever its placement says. Files never
 * change once written, so a move copies them and a delete removes them outright.
 */
@Injectable()
export class FileContents {
  constructor(private readonly clusters: DataClusters) {}

  private database(location: FileRecord['location']): Db {
    return this.clusters.database(location);
  }

  private bucket(location: FileRecord['location']): GridFSBucket {
    return new GridFSBucket(this.database(location), {
      bucketName: FILE_BUCKET,
      chunkSizeBytes: CHUNK_BYTES,
    });
  }

  /**
   * Streams `body` into GridFS as file `id`, never holding more than a chunk and what the
   * stream buffers; returns its size and SHA-256. On any failure what was written is removed.
   */
  async write(
    location: FileRecord['location'],
    id: string,
    name: string,
    body: Readable,
    options: WriteOptions,
  ): Promise<{ size: number; sha256: string }> {
    const hash = createHash('sha256');
    const garbage = new GarbageCadence(GARBAGE_EVERY_BYTES);
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        const total = size + chunk.length;
        if (total > options.maxBytes) {
          done(new FileTooLargeError(options.maxBytes));
          return;
        }
        const pass = () => {
          size = total;
          hash.update(chunk);
          garbage.passed(chunk.length);
          done(null, chunk);
        };
        if (options.grow) options.grow(total).then(pass, (error: Error) => done(error));
        else pass();
      },
    });
    const upload = this.bucket(location).openUploadStreamWithId(new ObjectId(id), name);
    try {
      await pipeline(body, meter, upload);
    } catch (error) {
      await this.remove(location, id).catch(() => undefined);
      throw error;
    }
    return { size, sha256: hash.digest('hex') };
  }

  /**
   * The bytes from `start` up to `end` (exclusive), or all of them, collecting the Buffers they
   * leave behind as they go (GARBAGE_EVERY_BYTES).
   */
  read(
    location: FileRecord['location'],
    id: string,
    range?: { start: number; end: number },
  ): Readable {
    const garbage = new GarbageCadence(GARBAGE_EVERY_BYTES);
    const collected = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        garbage.passed(chunk.length);
        done(null, chunk);
      },
    });
    const source = this.bucket(location).openDownloadStream(new ObjectId(id), range ?? {});
    source.on('error', (error) => collected.destroy(error));
    collected.on('close', () => source.destroy());
    return source.pipe(collected);
  }

  /** Removes a file's bytes, whole or in part; bytes that are not there are no error. */
  async remove(location: FileRecord['location'], id: string): Promise<void> {
    const db = this.database(location);
    const filesId = new ObjectId(id);
    await db.collection(`${FILE_BUCKET}.files`).deleteOne({ _id: filesId });
    await db.collection(`${FILE_BUCKET}.chunks`).deleteMany({ files_id: filesId });
  }

  /** Copies a file's bytes to another location, as they are (a tenant move). */
  async copy(from: FileRecord['location'], to: FileRecord['location'], id: string): Promise<void> {
    const filesId = new ObjectId(id);
    const source = this.database(from);
    const target = this.database(to);
    const chunks = source
      .collection(`${FILE_BUCKET}.chunks`)
      .find({ files_id: filesId })
      .sort({ n: 1 });
    for await (const chunk of chunks) {
      await target
        .collection(`${FILE_BUCKET}.chunks`)
        .replaceOne({ _id: chunk._id }, chunk, { upsert: true });
    }
    const file = await source.collection(`${FILE_BUCKET}.files`).findOne({ _id: filesId });
    if (file) {
      await target
        .collection(`${FILE_BUCKET}.files`)
        .replaceOne({ _id: filesId }, file, { upsert: true });
    }
  }
}
