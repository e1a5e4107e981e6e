import {
  BSON,
  MongoBulkWriteError,
  type Collection,
  type Document,
  type Filter,
  type OptionalUnlessRequiredId,
} from 'mongodb';
import { isUniqueViolation } from '../errors/mongo-errors';

/** Documents read or written per command while comparing two collections. */
const BATCH = 500;

export interface SyncResult {
  /** Documents copied to the target (missing there, or different). */
  copied: number;
  /** Documents the target's unique indexes refused (the source changed while it was read). */
  refused: number;
}

/**
 * Makes the documents of `target` that `filter` selects those of `source`: a document is the
 * same on both sides when its `fingerprint` fields are (a revision, a token: fields every write
 * changes). Documents of the target that differ or that the source lacks are deleted first, then
 * the source's copies of those that differ or are missing are inserted — so a source that holds
 * still while this runs leaves the target equal to it, unique indexes included. While the source
 * changes, inserts a unique index refuses are counted, and left to the next comparison.
 */
export async function syncDocuments<T extends Document>(
  source: Collection<T>,
  target: Collection<T>,
  filter: Filter<T>,
  fingerprint: readonly string[],
  onBatch: (progress: ChangedCopyProgress) => Promise<void> = async () => {},
): Promise<SyncResult> {
  const projection = Object.fromEntries(fingerprint.map((field) => [field, 1]));
  const [from, to] = await Promise.all([
    prints(source, filter, projection),
    prints(target, filter, projection),
  ]);
  const stale: unknown[] = [];
  for (const [key, print] of to) if (from.get(key)?.print !== print.print) stale.push(print.id);
  const missing: unknown[] = [];
  for (const [key, print] of from) if (to.get(key)?.print !== print.print) missing.push(print.id);
  let left = missing.length;
  await onBatch({ left });
  for (const ids of chunks(stale)) await target.deleteMany(byIds<T>(ids));
  const result: SyncResult = { copied: 0, refused: 0 };
  for (const ids of chunks(missing)) {
    const docs = (await source.find(byIds<T>(ids)).toArray()) as OptionalUnlessRequiredId<T>[];
    left -= ids.length;
    if (docs.length === 0) continue;
    try {
      result.copied += (await target.insertMany(docs, { ordered: false })).insertedCount;
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      if (!errors.every((e) => isUniqueViolation(e))) throw error;
      result.copied += error.result.insertedCount;
      result.refused += docs.length - error.result.insertedCount;
    }
    await onBatch({ left });
  }
  return result;
}

/** The documents with these `_id`s. */
function byIds<T extends Document>(ids: unknown[]): Filter<T> {
  return { _id: { $in: ids } } as Filter<T>;
}

async function prints<T extends Document>(
  collection: Collection<T>,
  filter: Filter<T>,
  projection: Document,
): Promise<Map<string, { id: unknown; print: string }>> {
  const found = new Map<string, { id: unknown; print: string }>();
  for await (const doc of collection.find(filter, { projection, batchSize: BATCH })) {
    found.set(BSON.EJSON.stringify(doc._id, { relaxed: false }), {
      id: doc._id,
      print: BSON.EJSON.stringify(doc, { relaxed: false }),
    });
  }
  return found;
}

function* chunks<T>(values: T[]): Generator<T[]> {
  for (let start = 0; start < values.length; start += BATCH)
    yield values.slice(start, start + BATCH);
}

/** What a catch-up copy found to do, before it did it. */
export interface ChangedCopyProgress {
  /** Documents found changed, left to copy. */
  left: number;
}

/**
 * Copies to `target` the documents of `source` that `filter` selects and whose `marker` (a
 * date every write sets) is at or after `since`, plus those with the `retry` ids (refused by a
 * unique index last time): each replaces its copy (deleted first, all of them, then inserted, as
 * in syncDocuments). Deletions at the source are not seen: syncDocuments, run last, makes the
 * target equal. Unlike syncDocuments it reads only what changed, not the whole collection; the
 * ids refused now are answered for the next call. `onBatch` hears how many are left to copy.
 */
export async function copyChanged<T extends Document>(
  source: Collection<T>,
  target: Collection<T>,
  filter: Filter<T>,
  marker: string,
  since: Date,
  retry: readonly unknown[],
  onBatch: (progress: ChangedCopyProgress) => Promise<void>,
): Promise<SyncResult & { refusedIds: unknown[] }> {
  const changed = { $or: [{ [marker]: { $gte: since } }, { _id: { $in: [...retry] } }] };
  const ids: unknown[] = [];
  for await (const doc of source.find({ $and: [filter, changed] } as Filter<T>, {
    projection: { _id: 1 },
    batchSize: BATCH,
  })) {
    ids.push(doc._id);
  }
  const result = { copied: 0, refused: 0, refusedIds: [] as unknown[] };
  let left = ids.length;
  await onBatch({ left });
  for (const chunk of chunks(ids)) await target.deleteMany(byIds<T>(chunk));
  for (const chunk of chunks(ids)) {
    const docs = (await source.find(byIds<T>(chunk)).toArray()) as OptionalUnlessRequiredId<T>[];
    if (docs.length > 0) {
      try {
        result.copied += (await target.insertMany(docs, { ordered: false })).insertedCount;
      } catch (error) {
        if (!(error instanceof MongoBulkWriteError)) throw error;
        const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
        if (!errors.every((e) => isUniqueViolation(e))) throw error;
        result.copied += error.result.insertedCount;
        result.refused += docs.length - error.result.insertedCount;
        for (const e of errors as { index: number }[]) result.refusedIds.push(docs[e.index]?._id);
      }
    }
    left -= chunk.length;
    await onBatch({ left });
  }
  return result;
}
