import { Transform, Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

/** Usage metering per tenant and day (docs/usage.md). */
export class UsageVariables {
  /** Count usage per tenant and day; off: requests cost no counting and nothing is flushed. */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  USAGE_ENABLED = true;

  /**
   * How often each instance writes what it counted (ms): the most of its usage a crash loses.
   * Shutdown (SIGTERM) writes the rest.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  USAGE_FLUSH_MS = 60_000;

  /** Days of usage kept; older days are deleted by a sweep on every instance. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3650)
  USAGE_RETENTION_DAYS = 400;

  /**
   * The UTC hour from which each day's stored gauges (items and file bytes per tenant) are
   * measured: one instance takes the day's snapshot at the first poll past this hour.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(23)
  USAGE_SNAPSHOT_HOUR = 0;

  /** How often each instance looks whether the day's snapshot is due or abandoned (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(3_600_000)
  USAGE_SNAPSHOT_POLL_MS = 300_000;

  /**
   * How long the instance taking a day's snapshot holds it without renewing (ms; each tenant
   * measured renews it): a snapshot whose holder died is taken over once this has run out.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  USAGE_SNAPSHOT_LEASE_MS = 60_000;
}
