import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config';
import { BackgroundTasks } from '../common/scheduling/background-tasks';
import { UsageFlusher } from './usage-flusher';
import { UsageMeter } from './usage-meter';
import type { UsageFlush, UsageRepository } from './usage.repository';

const ada = { kind: 'user' as const, id: 'ada' };
const config = { usage: { enabled: true, flushMs: 60_000, retentionDays: 30 } } as AppConfig;

/** A store that keeps rows by id as usage_flushes does, and fails the sends it is told to. */
class FakeFlushes {
  readonly stored = new Map<string, number>();
  sends = 0;
  /** Each entry: what the next send does — write and fail (a lost reply), or fail before writing. */
  failures: ('after-write' | 'before-write')[] = [];

  insertFlush(flush: UsageFlush): Promise<void> {
    this.sends += 1;
    const failure = this.failures.shift();
    if (failure === 'before-write') return Promise.reject(new Error('unreachable'));
    flush.rows.forEach((row, i) => {
      const id = flush.ids[i] as string;
      if (!this.stored.has(id)) this.stored.set(id, row.counts.read);
    });
    return failure === 'after-write' ? Promise.reject(new Error('timed out')) : Promise.resolve();
  }

  get reads(): number {
    return [...this.stored.values()].reduce((sum, n) => sum + n, 0);
  }
}

function setUp() {
  const meter = new UsageMeter(config);
  const flushes = new FakeFlushes();
  const tasks = new BackgroundTasks();
  const flusher = new UsageFlusher(meter, flushes as unknown as UsageRepository, config, tasks);
  return { meter, flushes, flusher };
}

describe('UsageFlusher', () => {
  // The failed flushes below are meant: their warnings are not this test's output.
  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterAll(() => jest.restoreAllMocks());

  it('writes nothing when nothing was counted', async () => {
    const { flushes, flusher } = setUp();
    await flusher.flush();
    expect(flushes.sends).toBe(0);
  });

  it('writes what was counted once, under ids of this instance and flush', async () => {
    const { meter, flushes, flusher } = setUp();
    meter.add(ada, { read: 2 });
    await flusher.flush();
    meter.add(ada, { read: 3 });
    await flusher.flush();
    expect(flushes.reads).toBe(5);
    expect([...flushes.stored.keys()]).toEqual([
      `${flusher.instanceId}-1-0`,
      `${flusher.instanceId}-2-0`,
    ]);
  });

  it('sends a flush whose reply was lost again with the same ids: counted once', async () => {
    const { meter, flushes, flusher } = setUp();
    flushes.failures = ['after-write'];
    meter.add(ada, { read: 2 });
    await flusher.flush(); // written, but the flusher cannot know
    meter.add(ada, { read: 7 });
    await flusher.flush(); // the first again, then the new counts
    expect(flushes.sends).toBe(3);
    expect(flushes.reads).toBe(9);
  });

  it('keeps a flush that failed, and what is counted meanwhile, for the next one', async () => {
    const { meter, flushes, flusher } = setUp();
    flushes.failures = ['before-write', 'before-write'];
    meter.add(ada, { read: 1 });
    await flusher.flush();
    meter.add(ada, { read: 1 });
    await flusher.flush();
    expect(flushes.reads).toBe(0);
    await flusher.flush();
    expect(flushes.reads).toBe(2);
  });

  it('flushes the rest before the app shuts down', async () => {
    const { meter, flushes, flusher } = setUp();
    meter.add(ada, { read: 4 });
    await flusher.beforeApplicationShutdown();
    expect(flushes.reads).toBe(4);
  });

  it('counts nothing when metering is off', () => {
    const meter = new UsageMeter({ usage: { ...config.usage, enabled: false } } as AppConfig);
    meter.add(ada, { read: 1 });
    expect(meter.counters.isEmpty).toBe(true);
  });
});
