import { BackgroundTasks } from './background-tasks';

describe('BackgroundTasks', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('starts registered tasks at bootstrap, runs them every interval within the jitter, and stops them', async () => {
    const host = new BackgroundTasks();
    let runs = 0;
    host.register({ name: 'count', intervalMs: 1000, run: () => Promise.resolve(runs++) });
    await jest.advanceTimersByTimeAsync(5000);
    expect(runs).toBe(0);

    host.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(899);
    expect(runs).toBe(0);
    await jest.advanceTimersByTimeAsync(1101 + 1);
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(runs).toBeLessThanOrEqual(2);

    await host.onModuleDestroy();
    const stoppedAt = runs;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(stoppedAt);
  });

  it('reports each run to its observers, a failed one as failed, and goes on after a failure', async () => {
    const host = new BackgroundTasks();
    const seen: string[] = [];
    host.observe((name, outcome) => seen.push(`${name}:${outcome}`));
    let calls = 0;
    const task = host.register({
      name: 'flaky',
      intervalMs: 1000,
      run: () => (calls++ === 0 ? Promise.reject(new Error('down')) : Promise.resolve()),
    });
    await task.runNow();
    await task.runNow();
    expect(seen).toEqual(['flaky:failed', 'flaky:ok']);
    expect(task.isStopped).toBe(false);
    await host.onModuleDestroy();
    expect(task.isStopped).toBe(true);
  });

  it('starts a task registered after bootstrap at once', async () => {
    const host = new BackgroundTasks();
    host.onApplicationBootstrap();
    let runs = 0;
    host.register({ name: 'late', intervalMs: 100, run: () => Promise.resolve(runs++) });
    await jest.advanceTimersByTimeAsync(111);
    expect(runs).toBe(1);
    await host.onModuleDestroy();
  });

  it('never schedules a disabled task, yet runs it on demand', async () => {
    const host = new BackgroundTasks();
    let runs = 0;
    const task = host.register({
      name: 'off',
      intervalMs: 100,
      run: () => Promise.resolve(runs++),
      enabled: false,
    });
    host.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(0);
    await task.runNow();
    expect(runs).toBe(1);
    await host.onModuleDestroy();
  });

  describe('idle backoff', () => {
    /** Registers a task that finds work while `busy` holds; records when each run began. */
    function polling(host: BackgroundTasks, maxMs: number, busy: () => boolean) {
      const runs: number[] = [];
      const task = host.register({
        name: 'poll',
        intervalMs: 1000,
        idleBackoff: { maxMs },
        run: () => {
          runs.push(Date.now());
          return Promise.resolve(busy());
        },
      });
      return { runs, task };
    }
    const gaps = (runs: number[]) => runs.slice(1).map((at, i) => at - runs[i]!);

    it('doubles the wait after each idle run, within the jitter, up to its ceiling', async () => {
      const host = new BackgroundTasks();
      const { runs } = polling(host, 8000, () => false);
      host.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(60_000);
      const waits = gaps(runs);
      // 1 s (the first run's wait), then 2, 4, 8, 8, … ±10 %.
      for (const [i, expected] of [2000, 4000, 8000, 8000, 8000].entries()) {
        expect(waits[i]).toBeGreaterThanOrEqual(expected * 0.9);
        expect(waits[i]).toBeLessThanOrEqual(expected * 1.1);
      }
      expect(Math.max(...waits)).toBeLessThanOrEqual(8800);
      await host.onModuleDestroy();
    });

    it('comes back to its interval after a run that found work', async () => {
      const host = new BackgroundTasks();
      let busy = false;
      const { runs } = polling(host, 8000, () => busy);
      host.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(30_000);
      busy = true;
      const from = runs.length;
      await jest.advanceTimersByTimeAsync(30_000);
      // The first busy run came after a long wait (up to 8.8 s); every wait after it is the
      // interval, so the 21.2 s left hold at least 19 of them, whatever the jitter drew.
      const waits = gaps(runs.slice(from));
      expect(waits.length).toBeGreaterThanOrEqual(19);
      expect(Math.max(...waits)).toBeLessThanOrEqual(1100);
      await host.onModuleDestroy();
    });

    it('runs within its interval once woken, however long it had backed off', async () => {
      const host = new BackgroundTasks();
      const { runs, task } = polling(host, 60_000, () => false);
      host.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(120_000);
      // Backed off to a minute by now: the next run is far away.
      const before = runs.length;
      task.wake();
      await jest.advanceTimersByTimeAsync(1100);
      expect(runs.length).toBe(before + 1);
      // It found nothing: the waits double again from the interval.
      await jest.advanceTimersByTimeAsync(2200);
      expect(runs.length).toBe(before + 2);
      await host.onModuleDestroy();
    });

    it('does not back off after an idle run that was woken while it ran', async () => {
      const host = new BackgroundTasks();
      const runs: number[] = [];
      let release: (() => void) | undefined;
      const task = host.register({
        name: 'slow',
        intervalMs: 1000,
        idleBackoff: { maxMs: 60_000 },
        run: async () => {
          runs.push(Date.now());
          if (runs.length === 4) await new Promise<void>((resolve) => (release = resolve));
          return false;
        },
      });
      host.onApplicationBootstrap();
      // Runs at ~1, 3, 7, 15 s: the fourth is held.
      await jest.advanceTimersByTimeAsync(20_000);
      expect(runs).toHaveLength(4);
      // A write while the run is under way: the run may have read before it.
      task.wake();
      release!();
      await jest.advanceTimersByTimeAsync(1100);
      expect(runs).toHaveLength(5);
      await host.onModuleDestroy();
    });

    it('leaves a wake of a task at its interval without effect', async () => {
      const host = new BackgroundTasks();
      const { runs, task } = polling(host, 8000, () => true);
      host.onApplicationBootstrap();
      for (let i = 0; i < 50; i++) {
        task.wake();
        await jest.advanceTimersByTimeAsync(100);
      }
      // Waking does not run it sooner than its interval: 5 s, 4 to 6 runs with the jitter.
      expect(runs.length).toBeGreaterThanOrEqual(4);
      expect(runs.length).toBeLessThanOrEqual(6);
      await host.onModuleDestroy();
    });

    it('runs a failed run again at its interval', async () => {
      const host = new BackgroundTasks();
      let fail = false;
      const runs: number[] = [];
      host.register({
        name: 'flaky',
        intervalMs: 1000,
        idleBackoff: { maxMs: 60_000 },
        run: () => {
          runs.push(Date.now());
          return fail ? Promise.reject<boolean>(new Error('down')) : Promise.resolve(false);
        },
      });
      host.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(120_000);
      fail = true;
      // Backed off to a minute, 66 s at most with the jitter: the first failed run comes by then.
      await jest.advanceTimersByTimeAsync(66_000);
      const from = runs.length;
      // Every wait after a failed run is the interval (1.1 s at most): 9 runs in 10 s at least.
      await jest.advanceTimersByTimeAsync(10_000);
      expect(runs.length - from).toBeGreaterThanOrEqual(9);
      await host.onModuleDestroy();
    });

    it('keeps a task without idleBackoff at its interval whatever its runs resolve', async () => {
      const host = new BackgroundTasks();
      let runs = 0;
      host.register({
        name: 'plain',
        intervalMs: 1000,
        run: () => {
          runs += 1;
          return Promise.resolve(false);
        },
      });
      host.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(20_000);
      expect(runs).toBeGreaterThanOrEqual(18);
      await host.onModuleDestroy();
    });
  });
});
