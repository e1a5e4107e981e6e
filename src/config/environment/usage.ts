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
}
