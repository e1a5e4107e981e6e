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
});
