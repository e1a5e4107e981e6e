import { DUPLICATE } from './duplicate';
import { claimSlot, type SlotSpace } from './slots';

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
