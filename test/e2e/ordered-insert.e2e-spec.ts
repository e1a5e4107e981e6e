import { MongoClient } from 'mongodb';
import { insertInOrder, ORDERED_INSERT_CHUNK } from '../../src/common/mongo/ordered-insert';
import { FeedCollections } from '../../src/events/feed-collections';
import { createTestApp, testDatabaseUri, type TestApp } from '../support/app';
import { ferretdbOnly } from '../support/database-server';
import { createUser, type TestUser } from '../support/factories';
import { startOwnDatabase, type OwnDatabase } from '../support/own-database';
import { recordedInserts } from '../support/recorded-inserts';

// Ordered inserts (src/common/mongo/ordered-insert.ts) on the real database: the change feed's
// numbered events, bulk imports and the rate limit's slots count on "what went in is the prefix
// before the refused document". FerretDB v1 keeps that only within one batch of its own (100
// documents): in a longer command it goes on after a refusal with the next batch.

interface Doc {
  _id: number;
}

const { dbName, collection, documentsPerInsert } = recordedInserts(__filename);

/** A collection of its own holding only `taken` (another writer's documents). */
const collectionWith = (taken: number[]) =>
  collection<Doc>(async (c) => {
    if (taken.length > 0) await c.insertMany(taken.map((_id) => ({ _id })));
  });

const docs = (count: number): Doc[] => Array.from({ length: count }, (_, _id) => ({ _id }));

describe('insertInOrder', () => {
  it('writes exactly the prefix before a refusal past the first hundred documents', async () => {
    const collection = await collectionWith([150]);
    await expect(insertInOrder(collection, docs(300))).resolves.toEqual({
      inserted: 150,
      refused: true,
    });
    const stored = (await collection.find().sort({ _id: 1 }).toArray()).map((d) => d._id);
    // Nothing after the refused document: a server that went on would have written 151..299.
    expect(stored).toEqual(docs(151).map((d) => d._id));
    expect(documentsPerInsert()).toEqual([ORDERED_INSERT_CHUNK, ORDERED_INSERT_CHUNK]);
  });

  it('writes every document when none is refused, a hundred per command', async () => {
    const collection = await collectionWith([]);
    await expect(insertInOrder(collection, docs(250))).resolves.toEqual({
      inserted: 250,
      refused: false,
    });
    expect(await collection.countDocuments()).toBe(250);
    expect(documentsPerInsert()).toEqual([100, 100, 50]);
  });

  it('reports a lone refused document as none inserted', async () => {
    const collection = await collectionWith([0]);
    await expect(insertInOrder(collection, docs(1))).resolves.toEqual({
      inserted: 0,
      refused: true,
    });
  });

  it('throws a failure that is not a refusal', async () => {
    const closed = new MongoClient(testDatabaseUri());
    await closed.connect();
    await closed.close();
    await expect(
      insertInOrder(closed.db(dbName).collection<Doc>('closed'), docs(3)),
    ).rejects.toThrow();
  });

  ferretdbOnly(
    'an ordered insert that a server goes on with after a refusal: FerretDB v1 with a small batch size does, MongoDB never',
    () => {
      describe('on a server that goes on after a refusal', () => {
        // FerretDB with batches of 10: an ordered command of 100 goes on past a refusal.
        let own: OwnDatabase | undefined;
        let ownClient: MongoClient | undefined;
        beforeAll(async () => {
          own = await startOwnDatabase('ordered-insert', ['--test-batch-size=10']);
          ownClient = await new MongoClient(own.uri, { directConnection: true }).connect();
        });
        afterAll(async () => {
          await ownClient?.close();
          await own?.stop();
        });

        it('throws instead of guessing which documents went in', async () => {
          const collection = ownClient!.db(dbName).collection<Doc>('goes-on');
          await collection.insertOne({ _id: 5 });
          await expect(insertInOrder(collection, docs(30))).rejects.toThrow(
            /went on after the refusal/,
          );
          // It did go on: documents of a batch after the refused one's are stored.
          expect(await collection.countDocuments({ _id: { $gt: 9 } })).toBeGreaterThan(0);
        });
      });
    },
  );
});

describe('the change feed when another instance takes a number in the middle of an append', () => {
  let t: TestApp;
  let user: TestUser;
  const ITEMS = 250;

  beforeAll(async () => {
    t = await createTestApp(__filename, { BULK_MAX_ITEMS: String(ITEMS) });
    user = await createUser(t);
  });
  afterAll(() => t?.close());

  it('numbers every change of the write exactly once, leaving no gap', async () => {
    const ids = Array.from({ length: ITEMS }, (_, i) => `i${String(i).padStart(3, '0')}`);
    const created = await t
      .http()
      .post('/data/numbered/bulk')
      .set('X-Api-Key', user.apiKey)
      .send({ items: ids.map((_id, n) => ({ _id, n })) })
      .expect(200);
    expect(created.body).toMatchObject({ created: ITEMS, failed: 0 });

    const { events } = await t.app.get(FeedCollections).of({ kind: 'user', id: user.subject });
    const newest = await events
      .find({ tenantKind: 'user', tenant: user.subject })
      .sort({ seq: -1 })
      .limit(1)
      .next();
    const namespace = {
      tenantKind: 'user',
      tenant: user.subject,
      branch: newest?.branch as string,
    };
    const head = newest?.seq as number;
    // Another instance's event, 60 numbers on: inside the first hundred numbers of the next
    // append, which deletes all 250 items in one write (one append of 250 changes).
    await events.insertOne({ ...namespace, seq: head + 60, type: 'deleted', key: 'elsewhere' });
    const deleted = await t
      .http()
      .delete('/data/numbered')
      .set('X-Api-Key', user.apiKey)
      .send({ filter: { n: { gte: 0 } }, multi: true })
      .expect(200);
    expect(deleted.body).toEqual({ deleted: ITEMS });

    const appended = await events
      .find({ ...namespace, seq: { $gt: head }, type: 'deleted', key: { $in: ids } })
      .sort({ seq: 1 })
      .toArray();
    // Every item's deletion once (none lost, none twice)...
    expect(appended.map((e) => e.key as string).sort()).toEqual(ids);
    // ...under the numbers after the head that the other event left free: no gap.
    const free = Array.from({ length: ITEMS + 1 }, (_, i) => head + 1 + i).filter(
      (seq) => seq !== head + 60,
    );
    expect(appended.map((e) => e.seq as number)).toEqual(free);
  });
});
