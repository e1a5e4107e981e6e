import { GroupCommit, KeyedGroupCommits } from './group-commit';

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

  it('with gather, waits for the end of the turn when idle and flushes what came in it together', async () => {
    const flushes: number[][] = [];
    const commit = new GroupCommit<number, number>(
      (items) => {
        flushes.push(items);
        return Promise.resolve(items.map((n) => n * 10));
      },
      { gather: true },
    );
    // Added in one turn, some a few microtask hops after the first.
    const added = [commit.add(1)];
    await Promise.resolve();
    added.push(commit.add(2));
    await Promise.resolve().then(() => undefined);
    added.push(commit.add(3));
    expect(flushes).toEqual([]);
    expect(await Promise.all(added)).toEqual([10, 20, 30]);
    expect(flushes).toEqual([[1, 2, 3]]);
    // Idle again: the next item is gathered on its own turn.
    expect(await commit.add(4)).toBe(40);
    expect(flushes).toEqual([[1, 2, 3], [4]]);
  });

  it('takes at most max items per flush', async () => {
    const sizes: number[] = [];
    const commit = new GroupCommit<number>(
      async (items) => {
        sizes.push(items.length);
        await tick();
        return items.map(() => undefined);
      },
      { max: 2 },
    );
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
      { onIdle: () => idle++ },
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

  it('refuses what was queued during a flush with its failure when the failure says so', async () => {
    const flushed: number[][] = [];
    let fail: (error: Error) => void = () => undefined;
    const commit = new GroupCommit<number>(
      async (items) => {
        flushed.push(items);
        if (flushed.length === 1) await new Promise<void>((_resolve, reject) => (fail = reject));
        return items.map(() => undefined);
      },
      { failsQueued: (error) => (error as Error).message === 'unreachable' },
    );
    const first = commit.add(1);
    await tick();
    const queued = [commit.add(2), commit.add(3)];
    fail(new Error('unreachable'));
    await expect(first).rejects.toThrow('unreachable');
    for (const q of queued) await expect(q).rejects.toThrow('unreachable');
    // Only the first flush ran: the queued items never reached the database.
    expect(flushed).toEqual([[1]]);
    await commit.add(4);
    expect(flushed).toEqual([[1], [4]]);
  });

  describe('with spacingMs', () => {
    beforeEach(() => jest.useFakeTimers({ now: 0, doNotFake: ['setImmediate', 'nextTick'] }));
    afterEach(() => jest.useRealTimers());

    it('starts flushes at least spacingMs apart, what comes meanwhile waiting for the next', async () => {
      const flushes: { at: number; items: number[] }[] = [];
      let idle = 0;
      const commit = new GroupCommit<number, number>(
        (items) => {
          flushes.push({ at: Date.now(), items });
          return Promise.resolve(items.map((n) => n * 10));
        },
        { spacingMs: 1000, onIdle: () => idle++ },
      );
      expect(await commit.add(1)).toBe(10);
      const waiting = [commit.add(2), commit.add(3), commit.add(2)];
      await jest.advanceTimersByTimeAsync(999);
      expect(flushes).toEqual([{ at: 0, items: [1] }]);
      await jest.advanceTimersByTimeAsync(1);
      expect(await Promise.all(waiting)).toEqual([20, 30, 20]);
      expect(flushes).toEqual([
        { at: 0, items: [1] },
        { at: 1000, items: [2, 3, 2] },
      ]);
      // Idle only once the spacing after the last flush has passed; then an add goes at once.
      expect(idle).toBe(0);
      await jest.advanceTimersByTimeAsync(1000);
      expect(idle).toBe(1);
      expect(await commit.add(4)).toBe(40);
      expect(flushes.at(-1)).toEqual({ at: 2000, items: [4] });
    });
  });
});

describe('KeyedGroupCommits', () => {
  it('batches each key on its own and starts afresh once a key ran dry', async () => {
    const flushes: [string, number[]][] = [];
    const commits = new KeyedGroupCommits<string, number, string>(
      (key, items) => {
        flushes.push([key, items]);
        return Promise.resolve(items.map((n) => `${key}${n}`));
      },
      { gather: true },
    );
    const first = await Promise.all([
      commits.add('a', 1),
      commits.add('b', 2),
      commits.add('a', 3),
    ]);
    expect(first).toEqual(['a1', 'b2', 'a3']);
    expect(flushes).toEqual([
      ['a', [1, 3]],
      ['b', [2]],
    ]);
    expect(await commits.add('a', 4)).toBe('a4');
    expect(flushes.at(-1)).toEqual(['a', [4]]);
  });
});
