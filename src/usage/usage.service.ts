import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { addCounts, emptyCounts, type UsageCounts } from './usage-counts';
import { rowKeyOf, type UsageRow } from './usage-counters';
import { daysBetween, type DayRange } from './usage-day';
import type { StoredGauges } from './usage-gauges';
import { UsageGaugesRepository, type GaugeRow } from './usage-gauges.repository';
import { UsageRepository } from './usage.repository';

/**
 * A tenant's usage over a range of days: every day of it (zeros where nothing was counted, no
 * gauges where no snapshot measured it), and the counts' total (gauges are not summed).
 */
export interface TenantUsage {
  from: string;
  to: string;
  days: { day: string; counts: UsageCounts; gauges: StoredGauges | null }[];
  total: UsageCounts;
}

/**
 * The first `limit` rows of two row-ordered lists, a row in both (a tenant that used something
 * on a day it was measured) made one: counted rows and measured rows, merged by row key.
 */
export function mergeRows(counted: UsageRow[], measured: GaugeRow[], limit: number): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const row of counted) rows.set(rowKeyOf(row.day, row.tenant), row);
  for (const { day, tenant, gauges } of measured) {
    const key = rowKeyOf(day, tenant);
    const row = rows.get(key);
    rows.set(key, row ? { ...row, gauges } : { day, tenant, counts: emptyCounts(), gauges });
  }
  return [...rows.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, limit)
    .map(([, row]) => row);
}

/** Rows fetched per round trip while a whole range is streamed (NDJSON export). */
const EXPORT_BATCH = 500;

/**
 * Reads usage: what the flushes of every instance wrote, summed per tenant and day, with the
 * gauges the day's snapshot measured.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly repository: UsageRepository,
    private readonly gauges: UsageGaugesRepository,
  ) {}

  async ofTenant(tenant: Tenant, range: DayRange): Promise<TenantUsage> {
    const [perDay, measured] = await Promise.all([
      this.repository.perDay(tenant, range),
      this.gauges.perDay(tenant, range),
    ]);
    const total = emptyCounts();
    const days = daysBetween(range.from, range.to).map((day) => {
      const counts = perDay.get(day) ?? emptyCounts();
      addCounts(total, counts);
      return { day, counts, gauges: measured.get(day) ?? null };
    });
    return { ...range, days, total };
  }

  /**
   * Rows (tenant and day) after `after`, `limit` at most: a row is there when its tenant used
   * something that day or the day's snapshot measured it. Each source is read up to `limit`
   * rows: the first `limit` of their union are among those.
   */
  private async rows(
    range: DayRange,
    options: { tenant?: Tenant; after?: string; limit: number },
  ): Promise<UsageRow[]> {
    const [counted, measured] = await Promise.all([
      this.repository.rows(range, options),
      this.gauges.rows(range, options),
    ]);
    return mergeRows(counted, measured, options.limit);
  }

  /** One page of rows (tenant and day) after the row key `after`, and whether more follow. */
  async page(
    range: DayRange,
    options: { tenant?: Tenant; after?: string; limit: number },
  ): Promise<{ rows: UsageRow[]; more: boolean }> {
    const rows = await this.rows(range, { ...options, limit: options.limit + 1 });
    return { rows: rows.slice(0, options.limit), more: rows.length > options.limit };
  }

  /** Every row of the range (after the row key `from`), in order, fetched in batches as the reader takes them. */
  async *allRows(range: DayRange, tenant?: Tenant, from?: string): AsyncGenerator<UsageRow> {
    let after = from;
    for (;;) {
      const rows = await this.rows(range, {
        ...(tenant ? { tenant } : {}),
        ...(after !== undefined ? { after } : {}),
        limit: EXPORT_BATCH,
      });
      yield* rows;
      const last = rows.at(-1);
      if (rows.length < EXPORT_BATCH || !last) return;
      after = rowKeyOf(last.day, last.tenant);
    }
  }
}
