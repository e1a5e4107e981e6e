import { firstFreeUnder } from '../common/mongo/slots';
import { TooManyStreamsError } from './events.errors';
import { StreamSlots, type PerKeyLimit, type StreamSlotStore } from './stream-slots';

/** The store as the database keeps it: slots per key, each with its lease. */
class MemoryStore implements StreamSlotStore {
  readonly slots = new Map<string, { key: string; slot: number; leaseUntil: Date }>();
  commands = 0;
  failReleases = false;
  private next = 0;

  /** A read, then an insert: other claims run in between, as they would against the database. */
  async claim(key: string, max: number, leaseUntil: Date): Promise<string | null> {
    this.commands += 2;
    const now = Date.now();
    const taken = new Set(
      [...this.slots.values()]
        .filter((s) => s.key === key && s.leaseUntil.getTime() >= now)
        .map((s) => s.slot),
    );
    for (const [id, s] of this.slots)
      if (s.key === key && s.leaseUntil.getTime() < now) this.slots.delete(id);
    const slot = firstFreeUnder(taken, max);
    await new Promise((resolve) => setImmediate(resolve));
    if (slot >= max) return null;
    // This store does not refuse a taken place (the database does): only turns keep it exact.
    const id = String((this.next += 1));
    this.slots.set(id, { key, slot, leaseUntil });
    return id;
  }

  renew(ids: readonly string[], leaseUntil: Date): Promise<string[]> {
    this.commands += 1;
    const lost: string[] = [];
    for (const id of ids) {
      const s = this.slots.get(id);
      if (s) s.leaseUntil = leaseUntil;
      else lost.push(id);
    }
    return Promise.resolve(lost);
  }

  release(id: string): Promise<void> {
    this.commands += 1;
    if (this.failReleases) return Promise.reject(new Error('database down'));
    this.slots.delete(id);
    return Promise.resolve();
  }

  heldBy(key: string): number {
    return [...this.slots.values()].filter((s) => s.key === key).length;
  }
}

async function refusal(take: () => Promise<unknown>): Promise<TooManyStreamsError> {
  try {
    await take();
  } catch (error) {
    if (error instanceof TooManyStreamsError) return error;
    throw error;
  }
  throw new Error('expected TooManyStreamsError');
}

const key = (max: number | null): PerKeyLimit => ({ max, holder: 'key' });
const LEASE = { leaseMs: 30_000 };

describe('StreamSlots', () => {
  let slots: StreamSlots[] = [];
  const make = (store: StreamSlotStore, total: number, leaseMs = LEASE.leaseMs): StreamSlots => {
    const made = new StreamSlots(store, { total, leaseMs });
    slots.push(made);
    return made;
  };
  afterEach(async () => {
    for (const s of slots) await s.beforeApplicationShutdown();
    slots = [];
  });

  it('refuses a key beyond its limit while other keys still get slots', async () => {
    const slots = make(new MemoryStore(), 10);
    await slots.take('a', key(2));
    await slots.take('a', key(2));
    const error = await refusal(() => slots.take('a', key(2)));
    expect(error.code).toBe('TOO_MANY_STREAMS');
    expect(error.message).toContain('EVENTS_MAX_STREAMS_PER_KEY');
    expect(error.message).toContain('over all instances');
    expect(error.headers).toEqual({ 'Retry-After': '5' });
    await slots.take('b', key(2));
    expect(slots.open).toBe(3);
  });

  it('holds a key to its limit over instances that share the store, each with its own total', async () => {
    const store = new MemoryStore();
    const one = make(store, 10);
    const two = make(store, 10);
    await one.take('a', key(3));
    await two.take('a', key(3));
    await one.take('a', key(3));
    await refusal(() => two.take('a', key(3)));
    await refusal(() => one.take('a', key(3)));
    expect(store.heldBy('a')).toBe(3);
    expect([one.open, two.open]).toEqual([2, 1]);
  });

  it('lets concurrent opens of one key on one instance take turns: exactly the limit get in, none collides', async () => {
    const store = new MemoryStore();
    const slots = make(store, 100);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, () => slots.take('a', key(5))),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    expect(store.heldBy('a')).toBe(5);
    expect(new Set([...store.slots.values()].map((s) => s.slot))).toEqual(new Set([0, 1, 2, 3, 4]));
    expect(slots.open).toBe(5);
    // A read and an insert each, none spent on a collision.
    expect(store.commands).toBe(2 * 12);
  });

  it('holds each key to the limit it is given as it takes a slot', async () => {
    const slots = make(new MemoryStore(), 10);
    await slots.take('a', key(3));
    await slots.take('a', key(3));
    // The tenant's limit was lowered: the streams held stay, a new one is refused.
    expect((await refusal(() => slots.take('a', key(1)))).message).toContain(
      'holds 1 event streams',
    );
    expect(slots.open).toBe(2);
    // Raised: a new one is taken.
    await slots.take('a', key(5));
    expect(slots.open).toBe(3);
  });

  it('takes any number for a key without a limit, within the instance total, at no store command', async () => {
    const store = new MemoryStore();
    const slots = make(store, 3);
    for (let i = 0; i < 3; i += 1) await slots.take('a', key(null));
    expect((await refusal(() => slots.take('a', key(null)))).message).toContain(
      'EVENTS_MAX_STREAMS)',
    );
    expect(store.commands).toBe(0);
  });

  it("names the publishable key's own setting when it refuses one", async () => {
    const slots = make(new MemoryStore(), 10);
    const publishable: PerKeyLimit = { max: 1, holder: 'publishable key' };
    await slots.take('p', publishable);
    const error = await refusal(() => slots.take('p', publishable));
    expect(error.message).toContain('EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY');
  });

  it('refuses every key once the instance is full, without a store command', async () => {
    const store = new MemoryStore();
    const slots = make(store, 3);
    await slots.take('a', key(5));
    await slots.take('b', key(5));
    await slots.take('c', key(5));
    const before = store.commands;
    expect((await refusal(() => slots.take('d', key(5)))).message).toContain('EVENTS_MAX_STREAMS)');
    expect(store.commands).toBe(before);
  });

  it('gives a slot back exactly once, however often it is released, and deletes it', async () => {
    const store = new MemoryStore();
    const slots = make(store, 2);
    const release = await slots.take('a', key(2));
    await slots.take('a', key(2));
    release();
    release();
    expect(slots.open).toBe(1);
    await slots.beforeApplicationShutdown();
    expect(store.heldBy('a')).toBe(1);
    await slots.take('a', key(2));
    expect(slots.open).toBe(2);
    await refusal(() => slots.take('a', key(2)));
    await refusal(() => slots.take('b', key(2)));
  });

  it('renews the leases of the slots it holds, and ends a stream whose slot was taken away', async () => {
    const store = new MemoryStore();
    const slots = make(store, 10);
    const lost: string[] = [];
    await slots.take('a', key(2), () => lost.push('first'));
    await slots.take('a', key(2), () => lost.push('second'));
    const [firstId] = [...store.slots.keys()];
    const before = Date.now();
    // Another instance found the first slot's lease run out and deleted it.
    store.slots.delete(firstId!);
    await slots.renew();
    expect(lost).toEqual(['first']);
    for (const s of store.slots.values())
      expect(s.leaseUntil.getTime()).toBeGreaterThanOrEqual(before + LEASE.leaseMs);
    // Lost once: a later renewal does not call it again.
    await slots.renew();
    expect(lost).toEqual(['first']);
  });

  it('leaves a slot it failed to delete to its lease: it is not renewed any more', async () => {
    const store = new MemoryStore();
    const slots = make(store, 10, 1000);
    const release = await slots.take('a', key(1));
    store.failReleases = true;
    release();
    await slots.beforeApplicationShutdown();
    expect(store.heldBy('a')).toBe(1);
    const leaseUntil = [...store.slots.values()][0]!.leaseUntil;
    await slots.renew();
    expect([...store.slots.values()][0]!.leaseUntil).toEqual(leaseUntil);
    // Once it has run out, the next claim of the key takes the place.
    leaseUntil.setTime(Date.now() - 1);
    store.failReleases = false;
    await slots.take('a', key(1));
    expect(store.heldBy('a')).toBe(1);
  });

  it('gives the instance place back when the claim fails', async () => {
    const store = new MemoryStore();
    store.claim = () => Promise.reject(new Error('database down'));
    const slots = make(store, 1);
    await expect(slots.take('a', key(1))).rejects.toThrow('database down');
    expect(slots.open).toBe(0);
  });

  it('refuses a key whose limit is 0 without a store command', async () => {
    const store = new MemoryStore();
    const slots = make(store, 10);
    expect((await refusal(() => slots.take('a', key(0)))).message).toContain('holds 0');
    expect(store.commands).toBe(0);
  });
});
