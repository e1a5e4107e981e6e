import { Transform, Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

/** Webhook deliveries: where they may go, how long they take and are retried (docs/events.md). */
export class WebhookVariables {
  /** Let webhooks call loopback, private and link-local addresses (development only). */
  @Transform(({ value }: { value: unknown }) => value === true || value === 'true' || value === '1')
  WEBHOOK_ALLOW_PRIVATE = false;

  /** How long one delivery attempt may take (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  WEBHOOK_TIMEOUT_MS = 5_000;

  /** The first retry's delay (ms); each next one doubles, up to an hour. */
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(3_600_000)
  WEBHOOK_RETRY_BASE_MS = 5_000;

  /**
   * The longest wait of an instance's webhook round while rounds find nothing to do: each idle
   * round doubles it from EVENTS_POLL_MS up to this; a write through the instance brings it back
   * at once. What it delays: a retry (sent up to this late), and the events of an instance that
   * died before fanning them out (ms).
   */
  @Type(() => Number)
  @IsInt()
  @Min(20)
  @Max(600_000)
  WEBHOOK_IDLE_POLL_MAX_MS = 5_000;

  /**
   * How long a delivery is retried, and how long an endpoint may fail without a success before
   * it is disabled (ms).
   */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(7 * 86_400_000)
  WEBHOOK_RETRY_WINDOW_MS = 86_400_000;

  /** Webhooks per namespace (tenant and branch). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_MAX = 20;
}
