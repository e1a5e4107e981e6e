import { Inject, Injectable, Logger } from '@nestjs/common';
import { DUPLICATE } from '../common/mongo/duplicate';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import { APP_CONFIG, type AppConfig } from '../config';
import { rowKeyOf } from './usage-counters';
import { utcDay } from './usage-day';
import type { Tenant } from '../common/tenancy/namespace';
import { USAGE_GAUGE_SOURCE, type GaugeValues, type UsageGaugeSource } from './usage-gauges';
import { UsageGaugesRepository } from './usage-gauges.repository';
import { UsageSnapshotRepository, type SnapshotRun } from './usage-snapshot.repository';

const HOUR_MS = 3_600_000;

/** The UTC day whose snapshot is due at `now` (from USAGE_SNAPSHOT_HOUR of that day); null before the hour. */
export function snapshotDueDay(now: number, hour: number): string | null {
  const day = utcDay(now);
  return now >= Date.parse(`${day}T00:00:00Z`) + hour * HOUR_MS ? day : null;
}

/**
 * The daily snapshot of what each tenant stores (items, file bytes), taken by one instance at a
 * time so that no request pays for it. Every instance polls (USAGE_SNAPSHOT_POLL_MS); from
 * USAGE_SNAPSHOT_HOUR on, the first whose insert of the day's snapshot record is not refused
 * takes it, under a lease it renews after each tenant — the lease of erasures and search builds:
 * a holder that dies leaves it to be taken over once the lease has run out. The one that takes
 * it over skips the tenants measured already, and every gauge is written under a fixed id
 * (day, tenant, gauge), so a tenant measured by two instances keeps the first value written:
 * exactly one value per tenant, day and gauge. A day no instance ran in after the hour has no
 * snapshot; a day's is never taken later.
 */
@Injectable()
export class UsageSnapshots {
  private readonly logger = new Logger('Usage');
  private readonly task: BackgroundTask;
  /** The last day this instance saw done: its polls that day cost nothing more. */
  private doneDay: string | undefined;

  constructor(
    private readonly gauges: UsageGaugesRepository,
    private readonly snapshots: UsageSnapshotRepository,
    @Inject(USAGE_GAUGE_SOURCE) private readonly source: UsageGaugeSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.task = tasks.register({
      name: 'usage-snapshot',
      intervalMs: config.usage.snapshotPollMs,
      run: () => this.takeDue(),
      enabled: config.usage.enabled,
    });
  }

  /** Takes the day's snapshot now if it is due and nobody holds it (tests); joins a run under way. */
  takeNow(): Promise<void> {
    return this.task.runNow();
  }

  private leaseFrom(now: number = Date.now()): Date {
    return new Date(now + this.config.usage.snapshotLeaseMs);
  }

  private async takeDue(): Promise<void> {
    const now = Date.now();
    const day = snapshotDueDay(now, this.config.usage.snapshotHour);
    if (day === null || day === this.doneDay) return;
    const run = await this.hold(day, now);
    if (!run) return;
    if (run.runs > 1) this.logger.log({ day }, 'resuming a usage snapshot');
    await this.measureAll(day);
  }

  /**
   * The day's snapshot, held by this instance; null when another holds it or it is done. Read
   * first, so that a poll once the day is done costs one read (and none on this instance once it
   * has seen it done).
   */
  private async hold(day: string, now: number): Promise<SnapshotRun | null> {
    let run = await this.snapshots.find(day);
    if (!run) {
      const begun = await this.snapshots.begin(day, new Date(now), this.leaseFrom(now));
      if (begun !== DUPLICATE) return begun;
      run = await this.snapshots.find(day);
    }
    if (run?.status === 'done') this.doneDay = day;
    if (!run || run.status === 'done' || run.leaseUntil.getTime() > now) return null;
    return this.snapshots.takeOver(run, this.leaseFrom(now));
  }

  /**
   * Measures every tenant not measured yet, renewing the lease after each; stops between two
   * tenants when the app shuts down (the lease then runs out and another instance goes on).
   */
  private async measureAll(day: string): Promise<void> {
    const measured = await this.gauges.measuredOn(day);
    for await (const tenant of this.source.tenants()) {
      if (this.task.isStopped) return;
      if (measured.has(rowKeyOf(day, tenant))) continue;
      if (!(await this.source.present(tenant))) continue;
      const values = await this.measure(tenant);
      const measuredAt = new Date();
      // An erasure that started while the tenant was measured: nothing of it is written.
      if (values && (await this.source.present(tenant)))
        await this.gauges.insert(day, tenant, values, measuredAt);
      await this.snapshots.renew(day, this.leaseFrom());
    }
    await this.snapshots.markDone(day, new Date());
    this.doneDay = day;
  }

  /**
   * One tenant's gauges; null when they cannot be read (a collection on a cluster that does not
   * answer): that tenant has none that day, and the others are still measured — a tenant that
   * always fails would otherwise stop every snapshot at it. A main database that does not answer
   * fails the lease renewal that follows, and the run stops there.
   */
  private async measure(tenant: Tenant): Promise<GaugeValues | null> {
    try {
      return await this.source.measure(tenant);
    } catch (error) {
      this.logger.warn({ err: error, tenant }, 'usage gauges not measured');
      return null;
    }
  }
}
