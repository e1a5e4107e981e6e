import { ApiProperty } from '@nestjs/swagger';
import { TENANT_KINDS, type TenantKind } from '../../common/tenancy/namespace';
import type { UsageCounts } from '../usage-counts';
import type { UsageRow } from '../usage-counters';
import type { StoredGauges } from '../usage-gauges';
import type { TenantUsage } from '../usage.service';

/** What a tenant used in a day (or a range): requests by class, bytes, stream time, webhooks. */
export class UsageCountsDto {
  /** Requests that read (GET, HEAD), streams and exports aside. */
  @ApiProperty({ example: 1520 })
  read!: number;

  /** Requests that write (POST, PUT, PATCH, DELETE), imports aside. */
  @ApiProperty({ example: 230 })
  write!: number;

  /** Event streams (GET /events/stream) and long polls (GET /events with `wait`) opened. */
  @ApiProperty({ example: 4 })
  stream!: number;

  /** Minutes the tenant's streams and long polls stayed open, to the millisecond. */
  @ApiProperty({ example: 95.5 })
  streamMinutes!: number;

  /** Exports (GET /export, GET /me/export). */
  @ApiProperty({ example: 1 })
  export!: number;

  /** Imports (POST /import). */
  @ApiProperty({ example: 0 })
  import!: number;

  /** Bytes the tenant's requests sent, as the connection read them (headers included). */
  @ApiProperty({ example: 412_000 })
  bytesIn!: number;

  /** Bytes the answers to them took on the connection (headers included). */
  @ApiProperty({ example: 3_200_000 })
  bytesOut!: number;

  /** Change-feed events the tenant's webhooks accepted (answered 2xx). */
  @ApiProperty({ example: 57 })
  webhookEvents!: number;

  static from(counts: UsageCounts): UsageCountsDto {
    const { streamMs, ...rest } = counts;
    return { ...rest, streamMinutes: Math.round(streamMs / 60) / 1000 };
  }
}

/**
 * A day's counts, and what the tenant stored as the day's snapshot measured it. The gauges are a
 * snapshot at one time (`measuredAt`), taken once per tenant and day from USAGE_SNAPSHOT_HOUR on,
 * not a sum over the day; null where no snapshot measured the tenant that day (today before the
 * snapshot, a day no instance ran, a tenant created after it, or one being erased).
 */
export class UsageMeasuredDto extends UsageCountsDto {
  /**
   * Items the tenant stored in all its collections and branches at `measuredAt`: a snapshot
   * taken once per day (from USAGE_SNAPSHOT_HOUR UTC), not a sum; null when the day has none.
   */
  @ApiProperty({ type: Number, nullable: true, minimum: 0, example: 12_000 })
  itemsStored!: number | null;

  /**
   * File bytes the tenant's quota ledger held at `measuredAt` (stored files and uploads under
   * way): a snapshot taken once per day, not a sum; null when the day has none.
   */
  @ApiProperty({ type: Number, nullable: true, minimum: 0, example: 52_428_800 })
  fileBytesStored!: number | null;

  /** When `itemsStored` and `fileBytesStored` were measured (RFC 3339); null with them. */
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-02T00:03:12.000Z',
  })
  measuredAt!: string | null;

  static fromDay(counts: UsageCounts, gauges: StoredGauges | null | undefined): UsageMeasuredDto {
    return {
      ...UsageCountsDto.from(counts),
      itemsStored: gauges?.itemsStored ?? null,
      fileBytesStored: gauges?.fileBytesStored ?? null,
      measuredAt: gauges?.measuredAt.toISOString() ?? null,
    };
  }
}

/** One UTC day of a tenant's usage. */
export class UsageDayDto extends UsageMeasuredDto {
  @ApiProperty({ example: '2026-01-02', format: 'date' })
  day!: string;
}

/**
 * GET /me/usage: every day of the range (zeros where nothing was used), and the range's total of
 * the counts (the gauges of a day are not summed).
 */
export class TenantUsageDto {
  @ApiProperty({ example: '2026-01-01', format: 'date' })
  from!: string;

  @ApiProperty({ example: '2026-01-31', format: 'date' })
  to!: string;

  @ApiProperty({ type: [UsageDayDto] })
  days!: UsageDayDto[];

  @ApiProperty({ type: UsageCountsDto })
  total!: UsageCountsDto;

  static from(usage: TenantUsage): TenantUsageDto {
    return {
      from: usage.from,
      to: usage.to,
      days: usage.days.map(({ day, counts, gauges }) => ({
        day,
        ...UsageMeasuredDto.fromDay(counts, gauges),
      })),
      total: UsageCountsDto.from(usage.total),
    };
  }
}

/** Whose usage a row is. */
export class UsageTenantDto {
  @ApiProperty({ enum: TENANT_KINDS, example: 'user' })
  kind!: TenantKind;

  /** A user's subject, or a team id. */
  @ApiProperty({ example: 'auth0|ada' })
  id!: string;
}

/** GET /admin/usage: one tenant's usage on one UTC day. */
export class UsageRowDto extends UsageMeasuredDto {
  @ApiProperty({ example: '2026-01-02', format: 'date' })
  day!: string;

  @ApiProperty({ type: UsageTenantDto })
  tenant!: UsageTenantDto;

  static fromRow(row: UsageRow): UsageRowDto {
    return {
      day: row.day,
      tenant: row.tenant,
      ...UsageMeasuredDto.fromDay(row.counts, row.gauges),
    };
  }
}
