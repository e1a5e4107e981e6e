import { MongoClient, type Collection, type Db } from 'mongodb';
import { orDuplicate } from '../../src/common/mongo/duplicate';
import { claimSlot, type SlotSpace } from '../../src/common/mongo/slots';
import { testDatabaseUri, uniqueDbName } from '../support/app';

/**
 * claimSlot on the real database, in both forms the service uses: slots named by `_id`
 * (rate limit, failed-authentication budget) and slots under a unique index (collection and
 * index quotas). Concurrent claims share nothing but the database, like requests on several
 * instances.
 */
let client: MongoClient;
let db: Db;

beforeAll(async () => {
  client = new MongoClient(testDatabaseUri());
  await client.connect();
  db = client.db(uniqueDbName(__filename));
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await client.close();
});

/** Slots `<scope>|<n>` in `_id`, counted by an `_id` range; never given back. */
function idSpace(slots: Collection<{ _id: string }>, scope: string): SlotSpace<number> {
  return {
    firstFree: () => slots.countDocuments({ _id: { $gte: `${scope}|`, $lt: `${scope}}` } }),
    take: (slot) =>
      orDuplicate(async () => {
        await slots.insertOne({ _id: `${scope}|${slot}` });
        return slot;
      }),
  };
}

interface Placed {
  scope: string;
  slot: number;
  owner: number;
}

/** Slots under a unique index on (scope, slot). */
function indexSpace(slots: Collection<Placed>, scope: string, owner: number): SlotSpace<number> {
  return {
    firstFree: () => slots.countDocuments({ scope }),
    take: (slot) =>
      orDuplicate(async () => {
        await slots.insertOne({ scope, slot, owner });
        return slot;
      }),
  };
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

it('gives exactly max of 50 concurrent claims a slot named by _id, each its own', async () => {
  const slots = db.collection<{ _id: string }>('id_slots');
  const results = await Promise.all(range(50).map(() => claimSlot(idSpace(slots, 'a'), 20)));
  const won = results.filter((slot): slot is number => slot !== null).sort((x, y) => x - y);
  expect(won).toEqual(range(20));
  expect(await slots.countDocuments()).toBe(20);
  // Another scope has its own places.
  expect(await claimSlot(idSpace(slots, 'b'), 20)).toBe(0);
});

it('gives exactly max of 50 concurrent claims a slot under a unique index', async () => {
  const slots = db.collection<Placed>('index_slots');
  await slots.createIndex({ scope: 1, slot: 1 }, { unique: true });
  const results = await Promise.all(
    range(50).map((owner) => claimSlot(indexSpace(slots, 'a', owner), 7)),
  );
  expect(results.filter((slot) => slot !== null)).toHaveLength(7);
  const stored = await slots.find({ scope: 'a' }).toArray();
  expect(stored.map((s) => s.slot).sort((x, y) => x - y)).toEqual(range(7));
  // The claims that got a slot are the ones whose document holds it.
  const winners = results.flatMap((slot, owner) => (slot === null ? [] : [owner])).sort();
  expect(stored.map((s) => s.owner).sort()).toEqual(winners);
});
