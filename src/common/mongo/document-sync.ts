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
  const result = await copyIds(source, target, filter, missing, async (kept) => {
    left -= kept;
    await onBatch({ left });
  });
  // Those deleted at the source meanwhile: the next comparison's.
  if (left > 0) await onBatch({ left: 0 });
  return { copied: result.copied, refused: result.refused };
}

/**
 * Inserts into `target` the documents of `source` with these `_id`s (among those `filter`
 * selects), batch by batch, as they are now; `onBatch` hears how many a batch held. A few are
 * looked up by `_id`; more than a batch are found in one scan of the source, not a lookup per
 * batch: where reads use no index (FerretDB v1) each lookup scans too.
 */
async function copyIds<T extends Document>(
  source: Collection<T>,
  target: Collection<T>,
  filter: Filter<T>,
  ids: readonly unknown[],
  onBatch: (inBatch: number) => Promise<void>,
): Promise<SyncResult & { refusedIds: unknown[] }> {
  const result = { copied: 0, refused: 0, refusedIds: [] as unknown[] };
  const insert = async (docs: readonly Document[]) => {
    const done = await insertTolerant(target, docs);
    result.copied += done.copied;
    result.refused += done.refused;
    result.refusedIds.push(...done.refusedIds);
    await onBatch(docs.length);
  };
  if (ids.length === 0) return result;
  if (ids.length <= BATCH) {
    const docs = await source.find(byIds<T>([...ids])).toArray();
    if (docs.length > 0) await insert(docs);
    return result;
  }
  const wanted = new Set(ids.map((id) => keyOf(id)));
  for await (const docs of batchesOf(source.find(filter, { batchSize: BATCH }))) {
    const kept = docs.filter((doc) => wanted.delete(keyOf(doc._id)));
    if (kept.length > 0) await insert(kept);
  }
  return result;
}

/**
 * Inserts `docs` into `target` unordered; those a unique index refused (the source changed while
 * it was read) are counted, with their `_id`s, and any other failure is thrown.
 */
async function insertTolerant<T extends Document>(
  target: Collection<T>,
  docs: readonly Document[],
): Promise<SyncResult & { refusedIds: unknown[] }> {
  try {
    const inserted = await target.insertMany(docs as OptionalUnlessRequiredId<T>[], {
      ordered: false,
    });
    return { copied: inserted.insertedCount, refused: 0, refusedIds: [] };
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (!errors.every((e) => isUniqueViolation(e))) throw error;
    return {
      copied: error.result.insertedCount,
      refused: docs.length - error.result.insertedCount,
      refusedIds: (errors as { index: number }[]).map((e): unknown => docs[e.index]?._id),
    };
  }
}

/** Groups a cursor's documents by BATCH. */
async function* batchesOf<T>(cursor: AsyncIterable<T>): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const doc of cursor) {
    batch.push(doc);
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** A key for an `_id` of any BSON type. */
function keyOf(id: unknown): string {
  return BSON.EJSON.stringify(id, { relaxed: false });
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
    found.set(keyOf(doc._id), {
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
  const changed = {
    $and: [filter, { $or: [{ [marker]: { $gte: since } }, { _id: { $in: [...retry] } }] }],
  };
  const ids: unknown[] = [];
  for await (const doc of source.find(changed as Filter<T>, {
    projection: { _id: 1 },
    batchSize: BATCH,
  })) {
    ids.push(doc._id);
  }
  let left = ids.length;
  await onBatch({ left });
  for (const chunk of chunks(ids)) await target.deleteMany(byIds<T>(chunk));
  // Read as they are now; those changed since the scan above are the next pass's.
  return copyIds(source, target, changed as Filter<T>, ids, async (kept) => {
    left -= kept;
    await onBatch({ left });
  });
}

/**
 * Copies to `target` the documents of `source` that `filter` selects and whose `marker` (the
 * date they were written) is at or after `since`, for documents that never change once written
 * (events): read whole in one scan, inserted unordered; one the target holds already (its `_id`)
 * is left as it is. Those a unique index refused otherwise are counted. Deletions at the source
 * are not seen.
 */
export async function copyAppended<T extends Document>(
  source: Collection<T>,
  target: Collection<T>,
  filter: Filter<T>,
  marker: string,
  since: Date,
  onBatch: (progress: ChangedCopyProgress) => Promise<void>,
): Promise<SyncResult> {
  const appended = { $and: [filter, { [marker]: { $gte: since } }] } as Filter<T>;
  const result: SyncResult = { copied: 0, refused: 0 };
  await onBatch({ left: 0 });
  for await (const docs of batchesOf(source.find(appended, { batchSize: BATCH }))) {
    const done = await insertTolerant(target, docs);
    result.copied += done.copied;
    if (done.refusedIds.length > 0) {
      const there = await target
        .find(byIds<T>(done.refusedIds), { projection: { _id: 1 } })
        .toArray();
      result.refused += done.refusedIds.length - there.length;
    }
    await onBatch({ left: 0 });
  }
  return result;
}
