import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Collection } from 'mongodb';
import type { Model } from 'mongoose';
import { isUniqueViolation } from '../common/errors/mongo-errors';
import type { Tenant, TenantKind } from '../common/tenancy/namespace';
import { rowKeyOf } from './usage-counters';
import type { DayRange } from './usage-day';
import { UsageGaugeDocument } from './usage-gauge.schema';
import { USAGE_GAUGES, type GaugeValues, type StoredGauges } from './usage-gauges';

/** A tenant's gauges on a day, with the row key they sort by. */
export interface GaugeRow {
  day: string;
  tenant: Tenant;
  gauges: StoredGauges;
}

/** The fixed id of one gauge of one tenant on one day. */
export function gaugeIdOf(day: string, tenant: Tenant, gauge: string): string {
  return `${rowKeyOf(day, tenant)}/${gauge}`;
}

const READ = { row: 1, day: 1, tenantKind: 1, tenant: 1, gauge: 1, value: 1, measuredAt: 1 };

/** Adds one gauge document to the tenant's gauges of its day (a missing gauge reads 0). */
function addGauge(into: StoredGauges | undefined, doc: UsageGaugeDocument): StoredGauges {
  const gauges = into ?? { itemsStored: 0, fileBytesStored: 0, measuredAt: doc.measuredAt };
  gauges[doc.gauge] = doc.value;
  if (doc.measuredAt > gauges.measuredAt) gauges.measuredAt = doc.measuredAt;
  return gauges;
}

/** The gauges of usage_gauges: inserted once each under fixed ids, never updated. */
@Injectable()
export class UsageGaugesRepository {
  constructor(
    @InjectModel(UsageGaugeDocument.name) private readonly model: Model<UsageGaugeDocument>,
  ) {}

  /**
   * Writes a tenant's gauges of a day (one unordered insert). A gauge written already (by
   * another instance, or an earlier attempt) is refused as a duplicate and kept as it was.
   */
  async insert(day: string, tenant: Tenant, values: GaugeValues, measuredAt: Date): Promise<void> {
    const docs = USAGE_GAUGES.map((gauge) => ({
      _id: gaugeIdOf(day, tenant, gauge),
      row: rowKeyOf(day, tenant),
      day,
      tenantKind: tenant.kind,
      tenant: tenant.id,
      gauge,
      value: values[gauge],
      measuredAt,
    }));
    try {
      const gauges = this.model.collection as unknown as Collection<UsageGaugeDocument>;
      await gauges.insertMany(docs, { ordered: false });
    } catch (error) {
      const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
      if (!Array.isArray(writeErrors) || writeErrors.length === 0) throw error;
      if (!writeErrors.every((writeError) => isUniqueViolation(writeError))) throw error;
    }
  }

  /** The row keys (`<day>/<kind>/<id>`) of the tenants whose every gauge of the day is written. */
  async measuredOn(day: string): Promise<Set<string>> {
    const docs = await this.model
      .find({ day }, { row: 1 })
      .lean<Pick<UsageGaugeDocument, 'row'>[]>()
      .exec();
    const perRow = new Map<string, number>();
    for (const { row } of docs) perRow.set(row, (perRow.get(row) ?? 0) + 1);
    return new Set([...perRow].filter(([, n]) => n === USAGE_GAUGES.length).map(([row]) => row));
  }

  /** A tenant's gauges per day of the range, days without a snapshot left out. */
  async perDay(tenant: Tenant, range: DayRange): Promise<Map<string, StoredGauges>> {
    const docs = await this.model
      .find(
        { tenantKind: tenant.kind, tenant: tenant.id, day: { $gte: range.from, $lte: range.to } },
        READ,
      )
      .lean<UsageGaugeDocument[]>()
      .exec();
    const perDay = new Map<string, StoredGauges>();
    for (const doc of docs) perDay.set(doc.day, addGauge(perDay.get(doc.day), doc));
    return perDay;
  }

  /**
   * Gauges per tenant and day within the range, in row order, after the row `after`, `limit`
   * rows at most; one tenant's only when given (as UsageRepository.rows reads the flushes).
   */
  async rows(
    range: DayRange,
    options: { tenant?: Tenant; after?: string; limit: number },
  ): Promise<GaugeRow[]> {
    const match: Record<string, unknown> = { day: { $gte: range.from, $lte: range.to } };
    if (options.tenant)
      Object.assign(match, { tenantKind: options.tenant.kind, tenant: options.tenant.id });
    if (options.after !== undefined) match.row = { $gt: options.after };
    const docs = await this.model
      .find(match, READ)
      .sort({ row: 1, _id: 1 })
      // Each row has at most one document per gauge.
      .limit(options.limit * USAGE_GAUGES.length)
      .lean<UsageGaugeDocument[]>()
      .exec();
    const rows: GaugeRow[] = [];
    for (const doc of docs) {
      const last = rows.at(-1);
      if (last && rowKeyOf(last.day, last.tenant) === doc.row) {
        addGauge(last.gauges, doc);
        continue;
      }
      if (rows.length === options.limit) break;
      rows.push({
        day: doc.day,
        tenant: { kind: doc.tenantKind as TenantKind, id: doc.tenant },
        gauges: addGauge(undefined, doc),
      });
    }
    return rows;
  }

  /** Deletes the gauges of days before `day`; how many. */
  async deleteBefore(day: string): Promise<number> {
    const { deletedCount } = await this.model.deleteMany({ day: { $lt: day } }).exec();
    return deletedCount;
  }
}
