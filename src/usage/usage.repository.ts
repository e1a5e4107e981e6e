import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Collection } from 'mongodb';
import type { Model } from 'mongoose';
import { isUniqueViolation } from '../common/errors/mongo-errors';
import type { Tenant, TenantKind } from '../common/tenancy/namespace';
import { addCounts, emptyCounts, USAGE_COUNTERS, type UsageCounts } from './usage-counts';
import { rowKeyOf, type UsageRow } from './usage-counters';
import type { DayRange } from './usage-day';
import { UsageFlushDocument } from './usage-flush.schema';

/** A flush as written: its rows, each with the id fixed when the flush was taken. */
export interface UsageFlush {
  ids: string[];
  rows: UsageRow[];
  flushedAt: Date;
}

/** The members a sum reads: the day and every counter. */
const COUNTED = Object.fromEntries([
  ['day', 1],
  ...USAGE_COUNTERS.map((name) => [name, 1]),
]) as Record<string, 1>;

function countsOf(doc: Record<string, unknown>): UsageCounts {
  const counts = emptyCounts();
  for (const name of USAGE_COUNTERS) counts[name] = Number(doc[name] ?? 0);
  return counts;
}

/** The flush rows of usage_flushes: written once each, summed on read. */
@Injectable()
export class UsageRepository {
  constructor(
    @InjectModel(UsageFlushDocument.name) private readonly model: Model<UsageFlushDocument>,
  ) {}

  /**
   * Writes a flush (one unordered insert). Rows an earlier send of the same flush wrote already
   * are refused as duplicates and skipped; any other failure is thrown, and the flush is sent
   * again later with the same ids.
   */
  async insertFlush(flush: UsageFlush): Promise<void> {
    const docs = flush.rows.map((row, i) => ({
      _id: flush.ids[i] as string,
      row: rowKeyOf(row.day, row.tenant),
      day: row.day,
      tenantKind: row.tenant.kind,
      tenant: row.tenant.id,
      ...row.counts,
      flushedAt: flush.flushedAt,
    }));
    try {
      // The driver's collection: the rows are written as built, without mongoose's casting.
      const flushes = this.model.collection as unknown as Collection<UsageFlushDocument>;
      await flushes.insertMany(docs, { ordered: false });
    } catch (error) {
      const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
      if (!Array.isArray(writeErrors) || writeErrors.length === 0) throw error;
      if (!writeErrors.every((writeError) => isUniqueViolation(writeError))) throw error;
    }
  }

  /**
   * A tenant's usage per day of the range, days without usage left out. Summed here, not by a
   * `$group`: FerretDB v1 answers a `$group` of several `$sum`s with only the first one right.
   */
  async perDay(tenant: Tenant, range: DayRange): Promise<Map<string, UsageCounts>> {
    const perDay = new Map<string, UsageCounts>();
    const docs = this.model
      .find(
        { tenantKind: tenant.kind, tenant: tenant.id, day: { $gte: range.from, $lte: range.to } },
        COUNTED,
      )
      .lean<Record<string, unknown>[]>()
      .cursor();
    for await (const doc of docs) {
      const day = String(doc.day);
      const counts = perDay.get(day) ?? emptyCounts();
      perDay.set(day, addCounts(counts, countsOf(doc)));
    }
    return perDay;
  }

  /**
   * Usage per tenant and day within the range, in row order (day, then tenant), after the row
   * `after` (a keyset page), `limit` rows at most; one tenant's only when given. The flush rows
   * are read in row order and summed as they come, until `limit` rows are complete.
   */
  async rows(
    range: DayRange,
    options: { tenant?: Tenant; after?: string; limit: number },
  ): Promise<UsageRow[]> {
    const match: Record<string, unknown> = { day: { $gte: range.from, $lte: range.to } };
    if (options.tenant)
      Object.assign(match, { tenantKind: options.tenant.kind, tenant: options.tenant.id });
    if (options.after !== undefined) match.row = { $gt: options.after };
    const docs = this.model
      .find(match, { ...COUNTED, row: 1, tenantKind: 1, tenant: 1 })
      .sort({ row: 1, _id: 1 })
      .lean<Record<string, unknown>[]>()
      .cursor();
    const rows: UsageRow[] = [];
    let key: string | undefined;
    // Leaving the loop early closes the cursor.
    for await (const doc of docs) {
      if (doc.row !== key) {
        if (rows.length === options.limit) break;
        key = String(doc.row);
        rows.push({
          day: String(doc.day),
          tenant: { kind: doc.tenantKind as TenantKind, id: String(doc.tenant) },
          counts: emptyCounts(),
        });
      }
      addCounts((rows.at(-1) as UsageRow).counts, countsOf(doc));
    }
    return rows;
  }

  /** Deletes the rows of days before `day`; how many. */
  async deleteBefore(day: string): Promise<number> {
    const { deletedCount } = await this.model.deleteMany({ day: { $lt: day } }).exec();
    return deletedCount;
  }
}
