import {
  MongoInvalidArgumentError,
  type Collection,
  type Document,
  type OptionalUnlessRequiredId,
} from 'mongodb';
import { KeyedGroupCommits } from '../batching/group-commit';
import { isDatabaseUnavailable, isUniqueViolation } from '../errors/mongo-errors';
import { DUPLICATE, orDuplicate, type Duplicate } from './duplicate';

/** What became of one document of a grouped insert. */
type Outcome = 'inserted' | Duplicate | 'alone';

/**
 * Inserts of single documents, grouped per collection (group commit): the documents of concurrent
 * inserts into one collection go in one unordered `insertMany`, so N concurrent writers cost
 * about one command per round trip instead of N; those of one turn of the event loop (requests
 * whose intents one command recorded) go together from the start. Each caller learns its own
 * document's outcome exactly as a lone `insertOne` would have told it: inserted, DUPLICATE (a
 * unique index refused it), or the error. One document's refusal does not stop the others (unordered); a failure of
 * the whole command (the database is unreachable) fails every document of it, as it would have
 * failed each lone insert.
 */
export class GroupedInserts {
  /** The inserts of each collection (by its handle), one queue per collection. */
  private readonly queues = new KeyedGroupCommits<Collection<Document>, Document, Outcome>(
    insertAll,
    { failsQueued: isDatabaseUnavailable, gather: true },
  );

  /** Inserts `doc` into `collection` with the documents of concurrent inserts into it. */
  async insert<T extends Document>(
    collection: Collection<T>,
    doc: OptionalUnlessRequiredId<T>,
  ): Promise<void | Duplicate> {
    const handle = collection as unknown as Collection<Document>;
    const outcome = await this.queues.add(handle, doc);
    if (outcome === DUPLICATE) return DUPLICATE;
    // Refused for another reason than a unique index: alone, it answers as a lone insert would.
    if (outcome === 'alone') return orDuplicate(async () => void (await handle.insertOne(doc)));
  }
}

/** One unordered insert of `docs`; the outcome of each, in order. */
async function insertAll(collection: Collection<Document>, docs: Document[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = docs.map(() => 'inserted');
  try {
    await collection.insertMany(docs, { ordered: false });
  } catch (error) {
    // Refused before anything was sent (a document over the server's size limit): each alone.
    if (error instanceof MongoInvalidArgumentError) return docs.map(() => 'alone');
    const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
    // No per-document answer: the command failed as a whole, and every document with it.
    if (!Array.isArray(writeErrors) || writeErrors.length === 0) throw error;
    for (const writeError of writeErrors as { index?: unknown }[]) {
      if (typeof writeError.index !== 'number') throw error;
      outcomes[writeError.index] = isUniqueViolation(writeError) ? DUPLICATE : 'alone';
    }
  }
  return outcomes;
}
