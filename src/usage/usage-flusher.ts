import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import { APP_CONFIG, type AppConfig } from '../config';
import { UsageMeter } from './usage-meter';
import { UsageRepository, type UsageFlush } from './usage.repository';

/** BackgroundTasks delays a run by up to +10 % (jitter): the interval leaves room for it. */
const JITTER_ROOM = 1.1;

/**
 * Writes what this instance counted every USAGE_FLUSH_MS at the latest, and at shutdown: one
 * insert per flush, whatever the number of requests. A flush takes the counters (they start
 * again from nothing) and fixes its ids — this instance's id, the flush's sequence number, the
 * row — before it is sent; a send that fails or times out is sent again, ids unchanged, before
 * anything newer, so what it wrote the first time is refused as duplicates and never counted
 * twice. A crash loses what was counted since the last flush taken (at most USAGE_FLUSH_MS of
 * the instance's usage), and the flush being sent, if its insert had not arrived.
 */
@Injectable()
export class UsageFlusher implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Usage');
  /** Names this process's flushes; a restarted instance is a new one. */
  readonly instanceId = randomBytes(8).toString('hex');
  private sequence = 0;
  /** A flush taken but not yet known to be written: sent again, as it is, before anything else. */
  private pending: UsageFlush | undefined;
  private readonly task: BackgroundTask;

  constructor(
    private readonly meter: UsageMeter,
    private readonly repository: UsageRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.task = tasks.register({
      name: 'usage-flush',
      intervalMs: Math.max(1, Math.floor(config.usage.flushMs / JITTER_ROOM)),
      run: () => this.flushAll(),
      enabled: meter.enabled,
    });
  }

  /** Flushes now (tests; shutdown); a call while a flush runs joins it. */
  flush(): Promise<void> {
    return this.task.runNow();
  }

  /**
   * After the HTTP server has drained (src/main.ts closes the app once in-flight requests end)
   * and before the database connection closes: the last counts are written.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.meter.enabled) return;
    await this.flush();
    if (this.pending || !this.meter.counters.isEmpty)
      this.logger.warn('usage not written at shutdown: the database refused the last flush');
  }

  private async flushAll(): Promise<void> {
    if (this.pending) await this.send(this.pending);
    if (this.meter.counters.isEmpty) return;
    const rows = this.meter.counters.drain();
    this.sequence += 1;
    const flush: UsageFlush = {
      ids: rows.map((_, i) => `${this.instanceId}-${this.sequence}-${i}`),
      rows,
      flushedAt: new Date(),
    };
    await this.send(flush);
  }

  private async send(flush: UsageFlush): Promise<void> {
    this.pending = flush;
    await this.repository.insertFlush(flush);
    this.pending = undefined;
  }
}
