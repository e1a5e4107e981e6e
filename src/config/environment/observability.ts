import { Transform } from 'class-transformer';
import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';

/** Prometheus metrics and OpenTelemetry tracing. */
export class ObservabilityVariables {
  /** Serve Prometheus metrics at /metrics and collect them (false: neither, and no cost). */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  METRICS_ENABLED = true;

  /** When set, /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  @MaxLength(512)
  METRICS_TOKEN?: string;

  /**
   * Database command metrics (mongodb_command_*) from the driver's command monitoring. Off by
   * default: the driver then builds an event for every command and decodes a second copy of
   * every reply, which costs more CPU per request than all other metrics together.
   */
  @Transform(({ value }: { value: unknown }) => value === true || value === 'true' || value === '1')
  METRICS_DATABASE_COMMANDS = false;

  /**
   * OTLP/HTTP collector (http://collector:4318): tracing is on when set, off (no SDK loaded)
   * otherwise. The OpenTelemetry SDK reads its other OTEL_* variables itself.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, {
    message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
  })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
}
