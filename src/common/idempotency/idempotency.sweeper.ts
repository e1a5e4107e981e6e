import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config';
import { IdempotencyRepository } from './idempotency.repository';

/** Records deleted per batch, and batches per sweep: a sweep's work is bounded. */
const SWEEP_BATCH = 500;
const SWEEP_MAX_BATCHES = 20;

/**
 * Deletes expired idempotency records every IDEMPOTENCY_SWEEP_INTERVAL_MS, on every instance
 * (FerretDB has no TTL index; deleting what another instance deleted already costs nothing). The
 * next sweep is scheduled when one ends, so sweeps never overlap; the timer does not keep the
 * process alive and is stopped before the connection closes. What a sweep leaves (more than
 * SWEEP_BATCH × SWEEP_MAX_BATCHES expired records) the next one takes; reads ignore expired
 * records meanwhile.
 */
@Injectable()
export class IdempotencySweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('IdempotencySweeper');
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  constructor(
    private readonly records: IdempotencyRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.intervalMs = config.idempotency.sweepIntervalMs;
  }

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /**
   * One sweep: deletes records expired by now and returns how many. A call while a sweep runs
   * joins that sweep.
   */
  sweep(): Promise<number> {
    this.running ??= this.deleteExpired().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async deleteExpired(): Promise<number> {
    const now = new Date();
    let deleted = 0;
    for (let batch = 0; batch < SWEEP_MAX_BATCHES && !this.stopped; batch += 1) {
      const count = await this.records.deleteExpired(now, SWEEP_BATCH);
      deleted += count;
      if (count < SWEEP_BATCH) break;
    }
    return deleted;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.sweep()
        .catch((error: unknown) => {
          this.logger.warn({ err: error }, 'could not delete expired idempotency records');
          return 0;
        })
        .finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }
}
