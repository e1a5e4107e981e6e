import { MongoClient } from 'mongodb';
import { DUPLICATE } from '../../src/common/mongo/duplicate';
import { GroupedInserts } from '../../src/common/mongo/grouped-inserts';
import { testDatabaseUri } from '../support/app';
import { recordedInserts } from '../support/recorded-inserts';

// The item creates' group commit (src/common/mongo/grouped-inserts.ts) on the real database:
// concurrent inserts into one collection share a command, and each caller still learns its own
// document's outcome as a lone insertOne would have told it.

interface Doc {
  _id: string;
  sku?: string;
  payload?: string;
}

const {
  dbName,
  collection: newCollection,
  inserts,
  documentsPerInsert,
  clear,
} = recordedInserts(__filename);

/** A collection of its own, with a unique index on `sku`. */
const freshCollection = () =>
  newCollection<Doc>((c) => c.createIndex({ sku: 1 }, { unique: true, name: 'sku' }));

describe('grouped inserts', () => {
  it('send the documents of concurrent inserts together and insert every one', async () => {
    const collection = await freshCollection();
    const grouped = new GroupedInserts();
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        grouped.insert(collection, { _id: `d${i}`, sku: `s${i}` }),
      ),
    );
    expect(outcomes).toEqual(Array.from({ length: 20 }, () => undefined));
    expect(await collection.countDocuments()).toBe(20);
    // Added in one turn of the event loop: one command.
    expect(documentsPerInsert()).toEqual([20]);
    // Added while a command runs: the next one.
    const first = grouped.insert(collection, { _id: 'e0', sku: 'e0' });
    await new Promise((resolve) => setImmediate(resolve));
    const rest = [1, 2, 3].map((i) => grouped.insert(collection, { _id: `e${i}`, sku: `e${i}` }));
    await Promise.all([first, ...rest]);
    expect(documentsPerInsert()).toEqual([20, 1, 3]);
    expect(await collection.countDocuments()).toBe(24);
  });

  it('answer DUPLICATE to exactly the documents a unique index refuses, and insert the rest', async () => {
    const collection = await freshCollection();
    await collection.insertOne({ _id: 'held', sku: 'taken' });
    clear();
    const grouped = new GroupedInserts();
    const outcomes = await Promise.all([
      grouped.insert(collection, { _id: 'a', sku: 'a' }),
      grouped.insert(collection, { _id: 'held', sku: 'other' }),
      grouped.insert(collection, { _id: 'b', sku: 'taken' }),
      grouped.insert(collection, { _id: 'c', sku: 'c' }),
      grouped.insert(collection, { _id: 'c', sku: 'c2' }),
    ]);
    expect(outcomes).toEqual([undefined, DUPLICATE, DUPLICATE, undefined, DUPLICATE]);
    const stored = await collection.find().sort({ _id: 1 }).toArray();
    expect(stored).toEqual([
      { _id: 'a', sku: 'a' },
      { _id: 'c', sku: 'c' },
      { _id: 'held', sku: 'taken' },
    ]);
    expect(inserts).toHaveLength(1);
  });

  it("fail only the caller of a document too large to send, with the driver's own error", async () => {
    const collection = await freshCollection();
    const grouped = new GroupedInserts();
    const huge = 'x'.repeat(17 * 1024 * 1024);
    const outcomes = await Promise.allSettled([
      grouped.insert(collection, { _id: 'first', sku: 'first' }),
      grouped.insert(collection, { _id: 'small', sku: 'small' }),
      grouped.insert(collection, { _id: 'huge', sku: 'huge', payload: huge }),
      grouped.insert(collection, { _id: 'last', sku: 'last' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    const ids = await collection.distinct('_id');
    expect([...ids].sort()).toEqual(['first', 'last', 'small']);
  });

  it('fail every caller of a command that fails as a whole', async () => {
    const collection = await freshCollection();
    const closed = new MongoClient(testDatabaseUri(), { serverSelectionTimeoutMS: 500 });
    await closed.connect();
    await closed.close();
    const grouped = new GroupedInserts();
    const gone = closed.db(dbName).collection<Doc>(collection.collectionName);
    const outcomes = await Promise.allSettled([
      grouped.insert(gone, { _id: 'x', sku: 'x' }),
      grouped.insert(gone, { _id: 'y', sku: 'y' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(await collection.countDocuments()).toBe(0);
    // The queue is usable again afterwards.
    await expect(grouped.insert(collection, { _id: 'z', sku: 'z' })).resolves.toBeUndefined();
  });
});
