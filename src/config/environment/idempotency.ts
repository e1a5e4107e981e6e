import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

/** How the responses to Idempotency-Key requests are kept and replayed. */
export class IdempotencyVariables {
  /** How long the response to an Idempotency-Key is kept and replayed (ms; at most 30 days). */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(30 * 86_400_000)
  IDEMPOTENCY_TTL_MS = 86_400_000;

  /**
   * How long a request holds its Idempotency-Key while it runs (ms): repeats in that time get
   * 409; after it (a crashed instance) the key may run again. Above the longest request.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  IDEMPOTENCY_LEASE_MS = 60_000;

  /** How often each instance deletes expired idempotency records (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  IDEMPOTENCY_SWEEP_INTERVAL_MS = 60_000;

  /** Largest response body kept for replay (bytes); a larger one is not kept (docs/requests.md, "Idempotent requests"). */
  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(15 * 1024 * 1024)
  IDEMPOTENCY_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
}
