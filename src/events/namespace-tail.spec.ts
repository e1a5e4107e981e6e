import fc from 'fast-check';
import type { FeedEvent } from './event-scope';
import { NamespaceTail, TAIL_PAGE, type TailReader, type TailSource } from './namespace-tail';

function event(seq: number): FeedEvent {
  return {
    seq,
    type: 'created',
    resource: 'item',
    collection: 'c',
    key: String(seq),
    branch: '',
    at: new Date(0),
    actor: { kind: 'root', id: 'r' },
    owner: seq % 3 === 0 ? 'a' : 'b',
    data: null,
  };
}

/** A feed in memory whose reads resolve on a later turn, so rounds and joins interleave. */
class Feed implements TailSource {
  readonly events: FeedEvent[] = [];
  reads = 0;

  append(count: number): void {
    for (let i = 0; i < count; i++) this.events.push(event(this.events.length + 1));
  }

  async latest(): Promise<number> {
    await Promise.resolve();
    return this.events.length;
  }

  async readAll(after: number, limit: number): Promise<FeedEvent[]> {
    this.reads++;
    await new Promise((resolve) => setImmediate(resolve));
    return this.events.filter((e) => e.seq > after).slice(0, limit);
  }
}

class Reader implements TailReader {
  readonly got: number[] = [];
  ownReads = 0;
  failed: unknown = null;

  constructor(
    public scanned: number,
    private readonly feed: Feed,
    private readonly owner: string | null,
    private readonly broken = false,
  ) {}

  prepare(): Promise<void> {
    return Promise.resolve();
  }

  wants(e: FeedEvent): boolean {
    return this.owner === null || e.owner === this.owner;
  }

  async readOwn(after: number, through: number, limit: number): Promise<FeedEvent[]> {
    this.ownReads++;
    await new Promise((resolve) => setImmediate(resolve));
    if (this.broken) throw new Error('read failed');
    return this.feed.events
      .filter((e) => e.seq > after && e.seq <= through && this.wants(e))
      .slice(0, limit);
  }

  paused = false;
  /** How many events one own read may hand it before it pauses (a client slow to read). */
  room = Infinity;

  send(events: FeedEvent[]): void {
    this.got.push(...events.map((e) => e.seq));
  }

  sendOwn(events: FeedEvent[]): number {
    const taken = events.slice(0, this.room);
    this.send(taken);
    if (taken.length < events.length) this.paused = true;
    return taken.length;
  }

  fail(error: unknown): void {
    this.failed = error;
  }

  async confirm(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
  }

  expected(feed: Feed, from: number): number[] {
    return feed.events.filter((e) => e.seq > from && this.wants(e)).map((e) => e.seq);
  }
}

async function drain(tail: NamespaceTail): Promise<void> {
  // A wake may start a round after the previous one ended: settle until nothing runs.
  for (let i = 0; i < 5; i++) {
    await tail.settled();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('NamespaceTail', () => {
  it('reads the feed once per change for all its readers', async () => {
    const feed = new Feed();
    feed.append(5);
    const tail = new NamespaceTail(feed, (error) => {
      throw error;
    });
    const readers = Array.from({ length: 100 }, (_, i) => new Reader(5, feed, i % 2 ? 'a' : null));
    for (const reader of readers) tail.add(reader);
    await drain(tail);
    const before = feed.reads;
    feed.append(3);
    tail.wake();
    await drain(tail);
    expect(feed.reads - before).toBe(1);
    for (const reader of readers) {
      expect(reader.got).toEqual(reader.expected(feed, 5));
      expect(reader.ownReads).toBe(0);
    }
  });

  it('hands each reader exactly its events after its cursor, in order, however joins, appends and wakes interleave', async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 700 }) }),
      fc.record({
        kind: fc.constant('join' as const),
        back: fc.integer({ min: 0, max: 1200 }),
        owner: fc.constantFrom('a', 'b', null),
      }),
      fc.record({ kind: fc.constant('wake' as const) }),
      fc.record({ kind: fc.constant('settle' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const feed = new Feed();
        const tail = new NamespaceTail(feed, (error) => {
          throw error;
        });
        const joined: { reader: Reader; from: number }[] = [];
        for (const s of steps) {
          if (s.kind === 'append') {
            feed.append(s.count);
            tail.wake();
          } else if (s.kind === 'join') {
            const from = Math.max(0, feed.events.length - s.back);
            const reader = new Reader(from, feed, s.owner);
            joined.push({ reader, from });
            tail.add(reader);
          } else if (s.kind === 'wake') tail.wake();
          else await drain(tail);
        }
        tail.wake();
        await drain(tail);
        for (const { reader, from } of joined) {
          expect(reader.failed).toBeNull();
          expect(reader.got).toEqual(reader.expected(feed, from));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('pages a long catch-up and the shared read by TAIL_PAGE', async () => {
    const feed = new Feed();
    feed.append(TAIL_PAGE * 2 + 7);
    const tail = new NamespaceTail(feed, (error) => {
      throw error;
    });
    const behind = new Reader(0, feed, null);
    tail.add(behind);
    await drain(tail);
    expect(behind.got).toHaveLength(TAIL_PAGE * 2 + 7);
    expect(behind.ownReads).toBe(3);
    feed.append(TAIL_PAGE + 1);
    tail.wake();
    await drain(tail);
    expect(behind.got).toEqual(behind.expected(feed, 0));
  });

  it('passes a paused reader by, and goes on from its last event taken once it wakes the tail', async () => {
    const feed = new Feed();
    feed.append(50);
    const tail = new NamespaceTail(feed, (error) => {
      throw error;
    });
    tail.wake();
    await drain(tail);
    const slow = new Reader(0, feed, 'a');
    slow.room = 4;
    const live = new Reader(50, feed, null);
    tail.add(slow);
    tail.add(live);
    await drain(tail);
    expect(slow.paused).toBe(true);
    expect(slow.got).toEqual(slow.expected(feed, 0).slice(0, 4));
    const reads = slow.ownReads;
    feed.append(30);
    tail.wake();
    await drain(tail);
    // Rounds while it is paused read nothing for it and hand it nothing.
    expect(slow.ownReads).toBe(reads);
    expect(slow.got).toHaveLength(4);
    expect(live.got).toEqual(live.expected(feed, 50));
    while (slow.paused) {
      slow.paused = false;
      tail.wake();
      await drain(tail);
    }
    expect(slow.got).toEqual(slow.expected(feed, 0));
  });

  it('ends a reader whose own read fails and keeps serving the others', async () => {
    const feed = new Feed();
    feed.append(10);
    const tail = new NamespaceTail(feed, (error) => {
      throw error;
    });
    tail.wake();
    await drain(tail);
    const broken = new Reader(2, feed, null, true);
    const fine = new Reader(10, feed, null);
    tail.add(broken);
    tail.add(fine);
    await drain(tail);
    expect(broken.failed).toBeInstanceOf(Error);
    expect(tail.size).toBe(1);
    feed.append(2);
    tail.wake();
    await drain(tail);
    expect(fine.got).toEqual([11, 12]);
    expect(broken.got).toEqual([]);
  });

  it('keeps its place when the shared read fails, and reads it again on the next wake', async () => {
    const feed = new Feed();
    const errors: unknown[] = [];
    const tail = new NamespaceTail(feed, (error) => errors.push(error));
    const reader = new Reader(0, feed, null);
    tail.add(reader);
    await drain(tail);
    feed.append(4);
    const read = feed.readAll.bind(feed);
    feed.readAll = () => Promise.reject(new Error('database down'));
    tail.wake();
    await drain(tail);
    expect(errors).toHaveLength(1);
    expect(reader.got).toEqual([]);
    feed.readAll = read;
    tail.wake();
    await drain(tail);
    expect(reader.got).toEqual([1, 2, 3, 4]);
  });
});
