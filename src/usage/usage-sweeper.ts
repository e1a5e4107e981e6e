import { Inject, Injectable } from '@nestjs/common';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import { APP_CONFIG, type AppConfig } from '../config';
import { addDays, utcDay } from './usage-day';
import { UsageGaugesRepository } from './usage-gauges.repository';
import { UsageSnapshotRepository } from './usage-snapshot.repository';
import { UsageRepository } from './usage.repository';

const SWEEP_INTERVAL_MS = 3_600_000;

/**
 * Deletes the usage of days older than USAGE_RETENTION_DAYS (today is day 1) — counts, gauges and
 * the days' snapshot records — hourly on every instance: FerretDB has no TTL index, and deleting
 * what another instance deleted costs nothing.
 */
@Injectable()
export class UsageSweeper {
  private readonly task: BackgroundTask;
  private deleted = 0;

  constructor(
    private readonly repository: UsageRepository,
    private readonly gauges: UsageGaugesRepository,
    private readonly snapshots: UsageSnapshotRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.task = tasks.register({
      name: 'usage-sweep',
      intervalMs: SWEEP_INTERVAL_MS,
      run: () => this.deleteOld(),
    });
  }

  /** One sweep now; how many flush rows and gauges it deleted. */
  async sweep(): Promise<number> {
    await this.task.runNow();
    return this.deleted;
  }

  /** The first day kept. */
  firstKeptDay(now = Date.now()): string {
    return addDays(utcDay(now), 1 - this.config.usage.retentionDays);
  }

  private async deleteOld(): Promise<void> {
    this.deleted = 0;
    const firstKept = this.firstKeptDay();
    this.deleted =
      (await this.repository.deleteBefore(firstKept)) + (await this.gauges.deleteBefore(firstKept));
    await this.snapshots.deleteBefore(firstKept);
  }
}
