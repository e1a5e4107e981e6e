import type { Collection, Document, OptionalUnlessRequiredId } from 'mongodb';
import { isUniqueViolation } from '../errors/mongo-errors';

/**
 * Documents per command of an ordered insert. FerretDB v1 writes an insert in batches of 100 (its
 * default batch size) and, when a unique index refuses a document, stops that batch only: the
 * later batches of the same command still go in, and the answer counts them. A command of at most
 * 100 documents stops at the refusal there as it does on MongoDB. Two commands instead of one per
 * 200 documents is the whole cost on MongoDB.
 */
export const ORDERED_INSERT_CHUNK = 100;

/** What an ordered insert wrote: a prefix of the documents, and whether a refusal ended it. */
export interface InsertedInOrder {
  inserted: number;
  refused: boolean;
}

/**
 * Inserts `docs` in their order until a unique index refuses one: how many went in (the refused
 * one and those after it were not written) and whether one was refused; any other failure is
 * thrown. Sent as commands of at most ORDERED_INSERT_CHUNK documents, each after the one before
 * it was acknowledged, so no document is written before those ahead of it.
 */
export async function insertInOrder<D extends Document>(
  collection: Collection<D>,
  docs: readonly OptionalUnlessRequiredId<D>[],
): Promise<InsertedInOrder> {
  let inserted = 0;
  while (inserted < docs.length) {
    const chunk = docs.slice(inserted, inserted + ORDERED_INSERT_CHUNK);
    try {
      if (chunk.length === 1) await collection.insertOne(chunk[0]!);
      else await collection.insertMany(chunk, { ordered: true });
      inserted += chunk.length;
    } catch (error) {
      const before = insertedBeforeRefusal(error);
      if (before === null) throw error;
      return { inserted: inserted + before, refused: true };
    }
  }
  return { inserted, refused: false };
}

/**
 * How many documents of one ordered insert command went in before a unique index refused one:
 * the refused document's index. Null when it failed otherwise. A server whose count disagrees
 * went on after the refusal, and which documents it wrote is unknown: that is thrown, never
 * guessed (a guess would number, or report, writes that did not happen).
 */
function insertedBeforeRefusal(error: unknown): number | null {
  const e = error as { writeErrors?: unknown; insertedCount?: unknown } | null;
  const writeErrors = Array.isArray(e?.writeErrors) ? (e.writeErrors as unknown[]) : [];
  if (writeErrors.length === 0) return isUniqueViolation(error) ? 0 : null;
  if (!writeErrors.every((w) => isUniqueViolation(w))) return null;
  const index = (writeErrors[0] as { index?: unknown }).index;
  if (typeof index !== 'number') return null;
  if (typeof e?.insertedCount === 'number' && e.insertedCount !== index)
    throw new Error(
      `the database wrote ${e.insertedCount} documents of an ordered insert whose document ${index} it refused: it went on after the refusal (FerretDB v1 with a batch size below ${ORDERED_INSERT_CHUNK})`,
      { cause: error },
    );
  return index;
}
