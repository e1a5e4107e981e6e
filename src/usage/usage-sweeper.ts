import { Inject, Injectable } from '@nestjs/common';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import { APP_CONFIG, type AppConfig } from '../config';
import { addDays, utcDay } from './usage-day';
import { UsageRepository } from './usage.repository';

const SWEEP_INTERVAL_MS = 3_600_000;

/**
 * Deletes the usage of days older than USAGE_RETENTION_DAYS (today is day 1), hourly on every
 * instance: FerretDB has no TTL index, and deleting what another instance deleted costs nothing.
 */
@Injectable()
export class UsageSweeper {
  private readonly task: BackgroundTask;
  private deleted = 0;

  constructor(
    private readonly repository: UsageRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.task = tasks.register({
      name: 'usage-sweep',
      intervalMs: SWEEP_INTERVAL_MS,
      run: () => this.deleteOld(),
    });
  }

  /** One sweep now; how many flush rows it deleted. */
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
    this.deleted = await this.repository.deleteBefore(this.firstKeptDay());
  }
}
