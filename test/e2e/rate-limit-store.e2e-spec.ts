import { MongoClient, type Collection, type CommandStartedEvent } from 'mongodb';
import { MongoFixedWindowThrottlerStorage } from '../../src/rate-limit/mongo-fixed-window.storage';
import {
  hitId,
  RATE_LIMIT_COLLECTION,
  type RateLimitHit,
} from '../../src/rate-limit/rate-limit-hits';
import { testDatabaseUri, uniqueDbName } from '../support/app';
import { holdClockInWindow } from '../support/held-clock';

/**
 * The database rate-limit store on the real database: stores built on one collection stand for
 * instances of the service sharing one database.
 */
const WINDOW_MS = 60_000;
let client: MongoClient;
let hits: Collection<RateLimitHit>;
/** Commands sent to the hits collection, in order. */
const commands: string[] = [];

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const windowStart = (): number => Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS;
const store = () => new MongoFixedWindowThrottlerStorage(() => hits);
const countOf = (key: string) => hits.countDocuments({ _id: { $regex: `^\\d+\\|${key}\\|` } });

/**
 * The commands one request sends to the hits collection and waits for. The sweep (a `delete`
 * started by an instance's first request in a window, not awaited) is counted on its own.
 */
async function commandsOf(run: () => Promise<unknown>): Promise<string[]> {
  const before = commands.length;
  await run();
  return commands.slice(before).filter((name) => name !== 'delete');
}

beforeAll(async () => {
  client = new MongoClient(testDatabaseUri(), { monitorCommands: true });
  await client.connect();
  hits = client.db(uniqueDbName(__filename)).collection<RateLimitHit>(RATE_LIMIT_COLLECTION);
  client.on('commandStarted', (event: CommandStartedEvent) => {
    const target = (event.command as Record<string, unknown>)[event.commandName];
    if (target === RATE_LIMIT_COLLECTION) commands.push(event.commandName);
  });
});
// The stores run in this process: each test holds their clock just after a window starts, so
// its increments all fall in one window however long they take.
beforeEach(() => holdClockInWindow(WINDOW_MS));
afterEach(() => jest.useRealTimers());
afterAll(async () => {
  await hits.db.dropDatabase().catch(() => undefined);
  await client.close();
});

it('admits exactly the limit of concurrent requests spread over two instances', async () => {
  const [a, b] = [store(), store()];
  const before = commands.length;
  const results = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      (i % 2 === 0 ? a : b).increment('key:race', WINDOW_MS, 20),
    ),
  );
  const admitted = results.filter((r) => !r.isBlocked);
  expect(admitted).toHaveLength(20);
  // Each admitted request holds its own place in the window: hits 1..20, each once.
  expect(admitted.map((r) => r.totalHits).sort((x, y) => x - y)).toEqual(
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
  for (const refused of results.filter((r) => r.isBlocked)) {
    expect(refused.timeToBlockExpire).toBeGreaterThan(0);
    expect(refused.timeToBlockExpire).toBeLessThanOrEqual(WINDOW_MS / 1000);
  }
  // Refused requests wrote nothing.
  expect(await countOf('key:race')).toBe(20);
  // Each instance tries each slot at most once: contention costs at most one refused insert per
  // slot and instance.
  expect(commands.slice(before).filter((name) => name === 'insert').length).toBeLessThanOrEqual(40);
});

it('counts each key on its own and answers with the seconds left in the window', async () => {
  const s = store();
  const first = await s.increment('key:one', WINDOW_MS, 3);
  const secondsLeft = Math.ceil((windowStart() + WINDOW_MS - Date.now()) / 1000);
  expect(first).toEqual({
    totalHits: 1,
    timeToExpire: expect.any(Number) as number,
    isBlocked: false,
    timeToBlockExpire: 0,
  });
  expect(Math.abs(first.timeToExpire - secondsLeft)).toBeLessThanOrEqual(1);
  expect((await s.increment('key:one', WINDOW_MS, 3)).totalHits).toBe(2);
  expect((await s.increment('key:two', WINDOW_MS, 3)).totalHits).toBe(1);
  expect((await s.increment('key:one', WINDOW_MS, 3)).totalHits).toBe(3);
  const over = await s.increment('key:one', WINDOW_MS, 3);
  expect(over.isBlocked).toBe(true);
  expect(over.timeToBlockExpire).toBe(over.timeToExpire);
  expect(await countOf('key:one')).toBe(3);
  expect(await countOf('key:two')).toBe(1);
});

it('costs one insert per request on one instance, and nothing once over the limit', async () => {
  const s = store();
  expect(await commandsOf(() => s.increment('key:cost', WINDOW_MS, 3))).toEqual(['find', 'insert']);
  expect(await commandsOf(() => s.increment('key:cost', WINDOW_MS, 3))).toEqual(['insert']);
  expect(await commandsOf(() => s.increment('key:cost', WINDOW_MS, 3))).toEqual(['insert']);
  // The instance knows the window is full: refused without a command.
  expect(await commandsOf(() => s.increment('key:cost', WINDOW_MS, 3))).toEqual([]);
  // Another instance learns it with one read, and writes nothing.
  expect(await commandsOf(() => store().increment('key:cost', WINDOW_MS, 3))).toEqual(['find']);
});

it('claims the concurrent requests of a key on one instance together, in one insert', async () => {
  const s = store();
  const before = commands.length;
  const results = await Promise.all(
    Array.from({ length: 30 }, () => s.increment('key:batch', WINDOW_MS, 25)),
  );
  const sent = commands.slice(before).filter((name) => name !== 'delete');
  const admitted = results.filter((r) => !r.isBlocked);
  expect(admitted.map((r) => r.totalHits).sort((x, y) => x - y)).toEqual(
    Array.from({ length: 25 }, (_, i) => i + 1),
  );
  expect(await countOf('key:batch')).toBe(25);
  // The first request reads the window and inserts its slot; the 29 that came meanwhile are
  // claimed by one more insert (the 5 over the limit write nothing).
  expect(sent).toEqual(['find', 'insert', 'insert']);
});

it('keeps the slots a batch inserted before one another instance took, and places the rest after it', async () => {
  const s = store();
  expect((await s.increment('key:split', WINDOW_MS, 100)).totalHits).toBe(1);
  // Another instance holds slot 3 (the fourth request's place).
  await hits.insertOne({ _id: hitId(windowStart(), 'key:split', 3) });
  const results = await Promise.all(
    Array.from({ length: 5 }, () => s.increment('key:split', WINDOW_MS, 100)),
  );
  // Slot 1 alone, slots 2-5 in one insert refused at slot 3: slot 2 is kept, the three requests
  // left read the window and take 4, 5 and 6.
  expect(results.map((r) => r.totalHits).sort((x, y) => x - y)).toEqual([2, 3, 5, 6, 7]);
  expect(await countOf('key:split')).toBe(7);
});

it('costs a read and an insert per request when instances take turns', async () => {
  const [a, b] = [store(), store()];
  const costs: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    const sent = await commandsOf(() =>
      (i % 2 === 0 ? a : b).increment('key:turns', WINDOW_MS, 100),
    );
    costs.push(sent.length);
  }
  // First requests read then insert; the first insert another instance made stale is refused
  // once (insert, find, insert); from then on each instance reads before it inserts.
  expect(costs.slice(0, 3)).toEqual([2, 2, 3]);
  expect(costs.slice(4)).toEqual([2, 2, 2, 2, 2, 2]);
  expect(await countOf('key:turns')).toBe(10);
});

it('tries a slot again after an insert failed, so a failure leaves no gap', async () => {
  let failNext = false;
  const flaky = new MongoFixedWindowThrottlerStorage(() =>
    failNext
      ? ({
          ...hits,
          insertOne: () => {
            failNext = false;
            return Promise.reject(new Error('connection reset'));
          },
        } as unknown as Collection<RateLimitHit>)
      : hits,
  );
  expect((await flaky.increment('key:flaky', WINDOW_MS, 3)).totalHits).toBe(1);
  failNext = true;
  await expect(flaky.increment('key:flaky', WINDOW_MS, 3)).rejects.toThrow('connection reset');
  expect((await flaky.increment('key:flaky', WINDOW_MS, 3)).totalHits).toBe(2);
  expect((await flaky.increment('key:flaky', WINDOW_MS, 3)).totalHits).toBe(3);
  expect((await flaky.increment('key:flaky', WINDOW_MS, 3)).isBlocked).toBe(true);
});

describe('claiming slots ahead (RATE_LIMIT_CHUNK)', () => {
  const chunked = (chunk: number) => new MongoFixedWindowThrottlerStorage(() => hits, chunk);

  it('inserts a chunk of slots at once; the requests that follow take them without a command', async () => {
    const s = chunked(10);
    const costs: string[][] = [];
    const totals: number[] = [];
    for (let i = 0; i < 11; i += 1)
      costs.push(
        await commandsOf(async () =>
          totals.push((await s.increment('key:ahead', WINDOW_MS, 1000)).totalHits),
        ),
      );
    expect(costs[0]).toEqual(['find', 'insert']);
    expect(costs.slice(1, 10)).toEqual(Array.from({ length: 9 }, () => []));
    expect(costs[10]).toEqual(['insert']);
    expect(totals).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    // The slots claimed ahead are real documents: another instance counts them.
    expect(await countOf('key:ahead')).toBe(20);
    expect((await store().increment('key:ahead', WINDOW_MS, 1000)).totalHits).toBe(21);
  });

  it('claims at most a sixteenth of the limit ahead', async () => {
    const s = chunked(100);
    await s.increment('key:small', WINDOW_MS, 48);
    expect(await countOf('key:small')).toBe(3);
    await chunked(100).increment('key:tiny', WINDOW_MS, 15);
    expect(await countOf('key:tiny')).toBe(1);
  });

  it('never admits more than the limit across two instances claiming ahead', async () => {
    const [a, b] = [chunked(8), chunked(8)];
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        (i % 2 === 0 ? a : b).increment('key:ahead-race', WINDOW_MS, 160),
      ),
    );
    const admitted = results.filter((r) => !r.isBlocked);
    // Each instance had requests enough to use every slot it claimed: exactly the limit.
    expect(admitted.map((r) => r.totalHits).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 160 }, (_, i) => i + 1),
    );
    expect(await countOf('key:ahead-race')).toBe(160);
  });

  it('leaves at most chunk − 1 slots unused on an instance when its requests stop', async () => {
    const [a, b] = [chunked(8), chunked(8)];
    expect((await a.increment('key:unused', WINDOW_MS, 160)).isBlocked).toBe(false);
    const results = await Promise.all(
      Array.from({ length: 200 }, () => b.increment('key:unused', WINDOW_MS, 160)),
    );
    // a holds 7 slots it claimed ahead and never used: b gets the other 152.
    expect(results.filter((r) => !r.isBlocked)).toHaveLength(152);
    expect(await countOf('key:unused')).toBe(160);
  });
});

it('sweeps once per window per instance', async () => {
  const s = store();
  const before = commands.length;
  for (let i = 0; i < 5; i += 1) await s.increment(`key:sweeps${i}`, WINDOW_MS, 5);
  await store().increment('key:sweeps', WINDOW_MS, 5);
  expect(commands.slice(before).filter((name) => name === 'delete')).toHaveLength(2);
});

it('deletes windows that ended before the previous one at the first request of a window', async () => {
  const now = windowStart();
  const old = [
    hitId(now - 3 * WINDOW_MS, 'key:old', 0),
    hitId(now - 2 * WINDOW_MS, 'key:old', 0),
    hitId(now - 2 * WINDOW_MS, 'key:old', 1),
  ];
  const kept = [hitId(now - WINDOW_MS, 'key:old', 0), hitId(now, 'key:kept', 0)];
  await hits.insertMany([...old, ...kept].map((_id) => ({ _id })));
  await store().increment('key:sweep', WINDOW_MS, 5);
  // The sweep runs off the request's path.
  for (let i = 0; i < 50 && (await hits.countDocuments({ _id: { $in: old } })) > 0; i += 1)
    await sleep(100);
  expect(await hits.countDocuments({ _id: { $in: old } })).toBe(0);
  expect(await hits.countDocuments({ _id: { $in: kept } })).toBe(2);
});
