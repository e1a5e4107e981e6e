import {
  BlockedAddresses,
  claimSlot,
  failureWindow,
  secondsUntil,
  slotId,
  slotIdRange,
  type SlotStore,
} from './auth-failure.budget';

/** The uniqueness of `_id` in memory; `delay` lets calls interleave like concurrent requests. */
function memoryStore(taken: Set<number>, delay = false): SlotStore {
  const tick = (): Promise<void> =>
    delay ? new Promise((r) => setImmediate(r)) : Promise.resolve();
  return {
    count: async () => {
      await tick();
      return taken.size;
    },
    tryInsert: async (slot) => {
      await tick();
      if (taken.has(slot)) return false;
      taken.add(slot);
      return true;
    },
  };
}

describe('failed-authentication budget', () => {
  it('puts every instant in the epoch-aligned window that contains it', () => {
    expect(failureWindow(0, 60_000)).toEqual({ start: 0, end: 60_000 });
    expect(failureWindow(59_999, 60_000)).toEqual({ start: 0, end: 60_000 });
    expect(failureWindow(60_000, 60_000)).toEqual({ start: 60_000, end: 120_000 });
    expect(failureWindow(1_700_000_123_456, 5_000)).toEqual({
      start: 1_700_000_120_000,
      end: 1_700_000_125_000,
    });
  });

  it('rounds Retry-After up to whole seconds and never below 1', () => {
    expect(secondsUntil(10_000, 0)).toBe(10);
    expect(secondsUntil(10_000, 8_999)).toBe(2);
    expect(secondsUntil(10_000, 9_999)).toBe(1);
    expect(secondsUntil(10_000, 10_000)).toBe(1);
  });

  it('names slots so that the id range of one address and window holds only its own', () => {
    const range = slotIdRange('10.0.0.1', 60_000);
    const inRange = (id: string): boolean => id >= range.from && id < range.to;
    expect(slotId('10.0.0.1', 60_000, 0)).toBe('10.0.0.1|60000|0');
    expect(inRange(slotId('10.0.0.1', 60_000, 0))).toBe(true);
    expect(inRange(slotId('10.0.0.1', 60_000, 19))).toBe(true);
    expect(inRange(slotId('10.0.0.1', 600_000, 0))).toBe(false);
    expect(inRange(slotId('10.0.0.1', 6_000, 0))).toBe(false);
    expect(inRange(slotId('10.0.0.10', 60_000, 0))).toBe(false);
    expect(inRange(slotId('10.0.0.', 60_000, 0))).toBe(false);
    expect(inRange(slotId('::ffff:10.0.0.1', 60_000, 0))).toBe(false);
  });

  it('takes the next free slot and refuses once max slots are taken', async () => {
    const taken = new Set<number>();
    const store = memoryStore(taken);
    const slots = [];
    for (let i = 0; i < 5; i += 1) slots.push(await claimSlot(store, 3));
    expect(slots).toEqual([0, 1, 2, null, null]);
    expect([...taken].sort()).toEqual([0, 1, 2]);
  });

  it('moves past slots taken since the count', async () => {
    const taken = new Set([0, 1, 2]);
    const stale: SlotStore = { ...memoryStore(taken), count: () => Promise.resolve(1) };
    expect(await claimSlot(stale, 5)).toBe(3);
    expect(await claimSlot(stale, 4)).toBeNull();
  });

  it('lets exactly max of many concurrent failures through', async () => {
    const taken = new Set<number>();
    const store = memoryStore(taken, true);
    const results = await Promise.all(Array.from({ length: 20 }, () => claimSlot(store, 5)));
    expect(results.filter((s) => s !== null).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(results.filter((s) => s === null)).toHaveLength(15);
  });

  describe('BlockedAddresses', () => {
    it('blocks an address until its window ends', () => {
      const blocked = new BlockedAddresses(10);
      blocked.block('a', 5_000, 1_000);
      expect(blocked.blockedUntil('a', 4_999)).toBe(5_000);
      expect(blocked.blockedUntil('b', 4_999)).toBeNull();
      expect(blocked.blockedUntil('a', 5_000)).toBeNull();
      expect(blocked.size).toBe(0);
    });

    it('stays within its capacity, dropping ended entries first, then the oldest', () => {
      const blocked = new BlockedAddresses(3);
      blocked.block('ended', 2_000, 1_000);
      blocked.block('old', 9_000, 1_000);
      blocked.block('newer', 9_000, 1_000);
      blocked.block('new', 9_000, 3_000);
      expect(blocked.size).toBe(3);
      expect(blocked.blockedUntil('old', 3_000)).toBe(9_000);
      blocked.block('newest', 9_000, 3_000);
      expect(blocked.size).toBe(3);
      expect(blocked.blockedUntil('old', 3_000)).toBeNull();
      expect(blocked.blockedUntil('newer', 3_000)).toBe(9_000);
      expect(blocked.blockedUntil('newest', 3_000)).toBe(9_000);
    });
  });
});
