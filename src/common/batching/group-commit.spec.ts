import { GroupCommit } from './group-commit';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('flushes an item at once when idle, and what came meanwhile together in the next flush', async () => {
    const flushes: number[][] = [];
    let release: () => void = () => undefined;
    const commit = new GroupCommit<number, number>(async (items) => {
      flushes.push(items);
      if (flushes.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return items.map((n) => n * 10);
    });
    const first = commit.add(1);
    await tick();
    expect(flushes).toEqual([[1]]);
    const rest = [commit.add(2), commit.add(3), commit.add(4)];
    await tick();
    expect(flushes).toEqual([[1]]);
    release();
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    expect(flushes).toEqual([[1], [2, 3, 4]]);
  });

  it('takes at most max items per flush', async () => {
    const sizes: number[] = [];
    const commit = new GroupCommit<number>(async (items) => {
      sizes.push(items.length);
      await tick();
      return items.map(() => undefined);
    }, 2);
    await Promise.all([1, 2, 3, 4, 5].map((n) => commit.add(n)));
    expect(sizes).toEqual([1, 2, 2]);
  });

  it('refuses every item of a failed flush and goes on with the next', async () => {
    let calls = 0;
    let idle = 0;
    const commit = new GroupCommit<number>(
      async (items) => {
        calls++;
        await tick();
        if (calls === 2) throw new Error('down');
        return items.map(() => undefined);
      },
      500,
      () => idle++,
    );
    const first = commit.add(1);
    const failed = [commit.add(2), commit.add(3)];
    await first;
    await expect(failed[0]).rejects.toThrow('down');
    await expect(failed[1]).rejects.toThrow('down');
    await commit.add(4);
    expect(calls).toBe(3);
    expect(idle).toBeGreaterThanOrEqual(1);
  });
});
