import { DUPLICATE } from './duplicate';
import { claimSlot, firstFreeUnder, lowestFree, type SlotSpace } from './slots';

/** Yields to other pending work, so that concurrent claims interleave like requests do. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Slots kept in a Set, with `_id` uniqueness as the only atomic step. `count` says how the space
 * finds where to start: the number of taken slots, or a fixed (possibly stale) answer.
 */
function memorySpace(taken: Set<number>, count?: () => number) {
  const inserts: number[] = [];
  const space: SlotSpace<number> = {
    firstFree: async () => {
      await tick();
      return count ? count() : taken.size;
    },
    take: async (slot) => {
      await tick();
      inserts.push(slot);
      if (taken.has(slot)) return DUPLICATE;
      taken.add(slot);
      return slot;
    },
  };
  return { space, inserts };
}

describe('claimSlot', () => {
  it('takes the next free slot and answers null once max slots are taken', async () => {
    const taken = new Set<number>();
    const { space, inserts } = memorySpace(taken);
    const results = [];
    for (let i = 0; i < 5; i += 1) results.push(await claimSlot(space, 3));
    expect(results).toEqual([0, 1, 2, null, null]);
    // A full space is recognised without an insert.
    expect(inserts).toEqual([0, 1, 2]);
  });

  it('moves past slots taken since the space was read', async () => {
    const taken = new Set([0, 1, 2]);
    const { space, inserts } = memorySpace(taken, () => 1);
    expect(await claimSlot(space, 5)).toBe(3);
    expect(inserts).toEqual([1, 2, 3]);
    expect(await claimSlot(space, 4)).toBeNull();
  });

  it('never retries a refused slot, whatever the space answers', async () => {
    const taken = new Set([0, 1, 2, 3]);
    const { space, inserts } = memorySpace(taken, () => 0);
    expect(await claimSlot(space, 10)).toBe(4);
    expect(inserts).toEqual([0, 1, 2, 3, 4]);
  });

  it('jumps ahead when the space looks again after a refusal', async () => {
    const taken = new Set([0, 1, 2, 3, 4, 5]);
    let reads = 0;
    const { space, inserts } = memorySpace(taken, () => (reads++ === 0 ? 0 : taken.size));
    expect(await claimSlot(space, 10)).toBe(6);
    expect(inserts).toEqual([0, 6]);
  });

  it('lets exactly max of many concurrent claims through, each in its own slot', async () => {
    const taken = new Set<number>();
    const { space, inserts } = memorySpace(taken);
    const results = await Promise.all(Array.from({ length: 50 }, () => claimSlot(space, 20)));
    const won = results.filter((slot) => slot !== null);
    expect(won.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(results.filter((slot) => slot === null)).toHaveLength(30);
    // Every claim inserts at most once per slot below max.
    expect(inserts.length).toBeLessThanOrEqual(50 * 20);
  });

  it('ends with the first answer that is not DUPLICATE', async () => {
    const attempts: number[] = [];
    const space: SlotSpace<string> = {
      firstFree: () => Promise.resolve(0),
      take: (slot) => {
        attempts.push(slot);
        return Promise.resolve(slot < 2 ? DUPLICATE : 'registered concurrently');
      },
    };
    expect(await claimSlot(space, 10)).toBe('registered concurrently');
    expect(attempts).toEqual([0, 1, 2]);
  });

  it('passes a failed insert on', async () => {
    const space: SlotSpace<number> = {
      firstFree: () => Promise.resolve(0),
      take: () => Promise.reject(new Error('connection reset')),
    };
    await expect(claimSlot(space, 3)).rejects.toThrow('connection reset');
  });
});

describe('firstFreeUnder', () => {
  it('is the lowest free slot while every taken slot is below max', () => {
    expect(firstFreeUnder(new Set([0, 1, 3]), 5)).toBe(2);
    expect(firstFreeUnder(new Set([0, 1, 2, 3, 4]), 5)).toBe(5);
    expect(firstFreeUnder(new Set(), 0)).toBe(0);
    expect(firstFreeUnder(new Set([0, 2]), Infinity)).toBe(1);
  });

  it('fills no freed slot while the taken ones are more than a lowered max', () => {
    // 10 held, the limit lowered to 5, slot 3 given back: 9 are still over 5.
    const held = new Set([0, 1, 2, 4, 5, 6, 7, 8, 9]);
    expect(firstFreeUnder(held, 5)).toBe(5);
  });

  it('lets the count grow only up to a lowered max, counting the slots above it', () => {
    // Slots 3 and 4 below max, 7 and 8 above: one more fits (5), and it must go below 1.
    expect(firstFreeUnder(new Set([3, 4, 7, 8]), 5)).toBe(0);
    expect(firstFreeUnder(new Set([0, 3, 4, 7, 8]), 5)).toBe(5);
  });

  it('keeps concurrent claims under a lowered max to max slots in all, whatever they read', async () => {
    for (let seed = 0; seed < 50; seed += 1) {
      // Held from a former limit of 12: some of its slots (a pseudo-random choice), then the
      // limit lowered to 6.
      const taken = new Set(
        Array.from({ length: 12 }, (_, i) => i).filter((i) => ((i + 1) * (seed + 7) * 31) % 7 < 3),
      );
      const max = 6;
      const space: SlotSpace<number> = {
        firstFree: async () => {
          await tick();
          return firstFreeUnder(new Set(taken), max);
        },
        take: async (slot) => {
          await tick();
          if (taken.has(slot)) return DUPLICATE;
          taken.add(slot);
          return slot;
        },
      };
      const before = taken.size;
      const claimed = await Promise.all(Array.from({ length: 8 }, () => claimSlot(space, max)));
      expect(taken.size).toBe(Math.max(before, max));
      expect(claimed.filter((slot) => slot !== null)).toHaveLength(Math.max(0, max - before));
    }
  });

  it('agrees with lowestFree when nothing is above max', () => {
    const taken = new Set([0, 1, 2, 5]);
    expect(firstFreeUnder(taken, 10)).toBe(lowestFree(taken));
  });
});
