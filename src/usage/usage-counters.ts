import type { Tenant } from '../common/tenancy/namespace';
import { addCounts, emptyCounts, type UsageCounts } from './usage-counts';
import { DAY_MS, utcDay } from './usage-day';
import type { StoredGauges } from './usage-gauges';

/**
 * The usage of one tenant on one UTC day: as one flush writes it (counts only), or as it is read
 * back, with the day's gauges when its snapshot measured the tenant.
 */
export interface UsageRow {
  day: string;
  tenant: Tenant;
  counts: UsageCounts;
  gauges?: StoredGauges;
}

/**
 * One row's key, `<day>/<kind>/<id>`: the day and the kind have a fixed shape, so the key reads
 * back unambiguously whatever the id holds, and keys sort by day, then tenant.
 */
export function rowKeyOf(day: string, tenant: Tenant): string {
  return `${day}/${tenant.kind}/${tenant.id}`;
}

/**
 * The usage one instance counted since its last flush, per tenant and UTC day, in memory: adding
 * costs a map lookup and a few additions, no database command. The day is the one of the
 * instant a count is added (a request is counted on the day it ends).
 */
export class UsageCounters {
  private rows = new Map<string, UsageRow>();
  /** The day of the last count and the instants it spans, so that a count formats no date. */
  private today = { day: '', from: 0, until: 0 };

  constructor(private readonly now: () => number = Date.now) {}

  add(tenant: Tenant, counts: Partial<UsageCounts>): void {
    const day = this.dayOf(this.now());
    const key = rowKeyOf(day, tenant);
    let row = this.rows.get(key);
    if (!row) {
      row = { day, tenant: { kind: tenant.kind, id: tenant.id }, counts: emptyCounts() };
      this.rows.set(key, row);
    }
    addCounts(row.counts, counts);
  }

  private dayOf(at: number): string {
    const { today } = this;
    if (at >= today.from && at < today.until) return today.day;
    const from = at - (((at % DAY_MS) + DAY_MS) % DAY_MS);
    this.today = { day: utcDay(at), from, until: from + DAY_MS };
    return this.today.day;
  }

  /** Everything counted so far, in key order; the counters start again from nothing. */
  drain(): UsageRow[] {
    const rows = [...this.rows.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, row]) => row);
    this.rows = new Map();
    return rows;
  }

  get isEmpty(): boolean {
    return this.rows.size === 0;
  }
}
