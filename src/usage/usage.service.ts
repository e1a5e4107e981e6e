import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { addCounts, emptyCounts, type UsageCounts } from './usage-counts';
import { rowKeyOf, type UsageRow } from './usage-counters';
import { daysBetween, type DayRange } from './usage-day';
import { UsageRepository } from './usage.repository';

/** A tenant's usage over a range of days: every day of it (zeros where nothing was counted). */
export interface TenantUsage {
  from: string;
  to: string;
  days: { day: string; counts: UsageCounts }[];
  total: UsageCounts;
}

/** Rows fetched per round trip while a whole range is streamed (NDJSON export). */
const EXPORT_BATCH = 500;

/** Reads usage: what the flushes of every instance wrote, summed per tenant and day. */
@Injectable()
export class UsageService {
  constructor(private readonly repository: UsageRepository) {}

  async ofTenant(tenant: Tenant, range: DayRange): Promise<TenantUsage> {
    const perDay = await this.repository.perDay(tenant, range);
    const total = emptyCounts();
    const days = daysBetween(range.from, range.to).map((day) => {
      const counts = perDay.get(day) ?? emptyCounts();
      addCounts(total, counts);
      return { day, counts };
    });
    return { ...range, days, total };
  }

  /** One page of rows (tenant and day) after the row key `after`, and whether more follow. */
  async page(
    range: DayRange,
    options: { tenant?: Tenant; after?: string; limit: number },
  ): Promise<{ rows: UsageRow[]; more: boolean }> {
    const rows = await this.repository.rows(range, { ...options, limit: options.limit + 1 });
    return { rows: rows.slice(0, options.limit), more: rows.length > options.limit };
  }

  /** Every row of the range (after the row key `from`), in order, fetched in batches as the reader takes them. */
  async *allRows(range: DayRange, tenant?: Tenant, from?: string): AsyncGenerator<UsageRow> {
    let after = from;
    for (;;) {
      const rows = await this.repository.rows(range, {
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
