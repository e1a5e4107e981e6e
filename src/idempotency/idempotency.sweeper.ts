import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import { allSettledOrThrow } from '../common/scheduling/all-settled';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import { IDEMPOTENCY_STORES, type IdempotencyStores } from './idempotency-stores';
import { IdempotencyRepository } from './idempotency.repository';

/** Records deleted per batch, and batches per sweep: a sweep's work is bounded. */
const SWEEP_BATCH = 500;
const SWEEP_MAX_BATCHES = 20;

/**
 * Deletes expired idempotency records every IDEMPOTENCY_SWEEP_INTERVAL_MS, on every instance
 * (FerretDB has no TTL index; deleting what another instance deleted already costs nothing), as
 * a background task. What a sweep leaves (more than SWEEP_BATCH × SWEEP_MAX_BATCHES expired
 * records) the next one takes; reads ignore expired records meanwhile.
 */
@Injectable()
export class IdempotencySweeper {
  private readonly task: BackgroundTask;
  private deleted = 0;

  constructor(
    private readonly records: IdempotencyRepository,
    @Inject(IDEMPOTENCY_STORES) private readonly stores: IdempotencyStores,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.task = tasks.register({
      name: 'idempotency-sweep',
      intervalMs: config.idempotency.sweepIntervalMs,
      run: () => this.deleteExpired(),
    });
  }

  /**
   * One sweep now: deletes records expired by now and returns how many. A call while a sweep
   * runs joins that sweep.
   */
  async sweep(): Promise<number> {
    await this.task.runNow();
    return this.deleted;
  }

  private async deleteExpired(): Promise<void> {
    const now = new Date();
    let deleted = 0;
    // Every records collection at once: one that is down holds up no other.
    try {
      await allSettledOrThrow(
        this.stores.everywhere().map(async (records) => {
          for (let batch = 0; batch < SWEEP_MAX_BATCHES && !this.task.isStopped; batch += 1) {
            const count = await this.records.deleteExpired(records, now, SWEEP_BATCH);
            deleted += count;
            if (count < SWEEP_BATCH) break;
          }
        }),
      );
    } finally {
      this.deleted = deleted;
    }
  }
}
