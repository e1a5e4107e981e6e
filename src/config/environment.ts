import { Transform, Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';

/**
 * Every environment variable the service reads, with its default.
 * `.env.example` documents the same list; keep them in step.
 */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' = 'info';

  @IsOptional()
  @Matches(/^mongodb(\+srv)?:\/\/.+/, {
    message: 'MONGODB_URI must be a mongodb:// or mongodb+srv:// URI',
  })
  MONGODB_URI?: string;

  /**
   * Database name used when MONGODB_URI names none (then `profile_data`); set to a different name
   * than the URI's, the service refuses to boot (src/config/database-name.ts).
   */
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,38}$/, {
    message: 'MONGODB_DB_NAME must be 1-38 letters, digits, _ or -',
  })
  MONGODB_DB_NAME?: string;

  /**
   * A database named in MONGODB_URI's path that holds none of the service's collections while
   * `profile_data` on the same server does is refused at boot (a deployment upgraded from a
   * version that ignored the URI's database would otherwise start empty). `true` starts on it
   * anyway: a deliberate fresh start.
   */
  @Transform(({ value }: { value: unknown }) => value === true || value === 'true' || value === '1')
  DB_ALLOW_FRESH_START = false;

  /**
   * How long an instance keeps trying to reach the database at start (with backoff) before it
   * exits with an error naming the address and this setting (ms). Request-time bounds are
   * DB_SERVER_SELECTION_TIMEOUT_MS and QUERY_TIMEOUT_MS.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(600_000)
  DB_BOOT_TIMEOUT_MS = 30_000;

  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'ADMIN_API_KEY must be at least 32 characters' })
  @MaxLength(512)
  ADMIN_API_KEY?: string;

  /** At most a billion: the database store numbers a window's requests with ten digits. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000_000)
  RATE_LIMIT_MAX = 1000;

  @Type(() => Number)
  @IsInt()
  @Min(100)
  RATE_LIMIT_WINDOW_MS = 60_000;

  /**
   * Where the rate-limit counters live: `mongo` (the database, one budget per key shared by all
   * instances) or `memory` (each process counts on its own). Unset: mongo when
   * NODE_ENV=production, memory otherwise.
   */
  @IsOptional()
  @IsIn(['mongo', 'memory'])
  RATE_LIMIT_STORE?: 'mongo' | 'memory';

  /** Failed authentications (unknown, revoked or expired key) per client address per window. */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  AUTH_FAILURE_MAX = 20;

  /** At least a second: Retry-After is given in whole seconds. */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  AUTH_FAILURE_WINDOW_MS = 60_000;

  /**
   * From an address over its failed-authentication budget, keys that are neither the operator key
   * nor cached are looked up together, at most one database command per this many ms per address
   * and instance.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  AUTH_FAILURE_LOOKUP_INTERVAL_MS = 1_000;

  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  BODY_LIMIT = 1024 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(600_000)
  QUERY_TIMEOUT_MS = 5_000;

  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  DB_SERVER_SELECTION_TIMEOUT_MS = 2_000;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(60)
  DB_RETRY_AFTER_SECONDS = 5;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  MAX_COLLECTIONS = 100;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(63)
  MAX_INDEXES = 20;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  LIST_LIMIT_DEFAULT = 50;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  LIST_LIMIT_MAX = 500;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  DATA_MAX_DEPTH = 20;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  FILTER_MAX_CONDITIONS = 20;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  FILTER_MAX_IN_VALUES = 100;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  AGGREGATE_MAX_GROUPS = 1000;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  BULK_MAX_ITEMS = 500;

  @Type(() => Number)
  @IsInt()
  @Min(1024)
  PROFILE_JSON_MAX_BYTES = 64 * 1024;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  PROFILE_JSON_MAX_DEPTH = 10;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  SHUTDOWN_TIMEOUT_MS = 10_000;

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

  /** Largest response body kept for replay (bytes); a larger one is not kept (see README). */
  @Type(() => Number)
  @IsInt()
  @Min(1024)
  @Max(15 * 1024 * 1024)
  IDEMPOTENCY_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

  /**
   * How long an instance trusts what it read of the collection registry (ms; 0: not at all). A
   * collection dropped through another instance may still take writes there for this long; the
   * instance that dropped it forgets it at once.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(600_000)
  REGISTRY_CACHE_MS = 5_000;

  /** Registry entries an instance keeps in memory at most (the least recently used go first). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  REGISTRY_CACHE_SIZE = 10_000;

  /**
   * How long an instance trusts an API key it looked up (ms; 0: look every key up on every
   * request). A key revoked through another instance still works here for at most this long; the
   * instance that revokes it forgets it at once, and expiry is checked on every request.
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(60_000)
  API_KEY_CACHE_MS = 5_000;

  /** API keys an instance keeps in memory at most (the least recently used go first). */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  API_KEY_CACHE_SIZE = 10_000;

  /**
   * How long a dropped collection's tombstone is kept (ms): every instance drops the native
   * collection again while it lasts, so a write that was already under way when the drop came
   * cannot leave a collection behind. Above REGISTRY_CACHE_MS plus the longest request.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(86_400_000)
  COLLECTION_DROP_GRACE_MS = 120_000;

  /**
   * How long an instance holds an erasure it works on (ms). An erasure whose holder died is taken
   * over by any instance once the lease has run out.
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  ERASURE_LEASE_MS = 30_000;

  /** How often each instance looks for erasures to finish and tombstones to clear (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(3_600_000)
  LIFECYCLE_POLL_MS = 5_000;

  /** Record a change feed (GET /events, webhooks); off: writes cost no feed commands. */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  EVENTS_ENABLED = true;

  /** How long events are kept (ms); a cursor older than that → 410. */
  @Type(() => Number)
  @IsInt()
  @Min(1000)
  @Max(366 * 86_400_000)
  EVENTS_RETENTION_MS = 7 * 86_400_000;

  /**
   * How often each instance looks for changes made through other instances for its waiting
   * readers (long polls, streams) and for webhook deliveries to make (ms).
   */
  @Type(() => Number)
  @IsInt()
  @Min(20)
  @Max(60_000)
  EVENTS_POLL_MS = 500;

  /**
   * How often each instance reconciles abandoned intents and deletes events past retention (ms).
   * Both read the feed's collections; on a database that scans them this is the feed's
   * background cost.
   */
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(3_600_000)
  EVENTS_SWEEP_MS = 10_000;

  /**
   * How old a write's recorded intent must be before the reconciler records its events itself
   * (the writer died between the change and its event). Above the longest request (ms).
   */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  EVENTS_INTENT_GRACE_MS = 60_000;

  /** Comment lines a stream sends while quiet, so proxies keep it open (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(300_000)
  EVENTS_HEARTBEAT_MS = 15_000;

  /**
   * Streams and waiting long polls one API key may hold open on an instance at once; more → 429
   * TOO_MANY_STREAMS.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  EVENTS_MAX_STREAMS_PER_KEY = 10;

  /**
   * Streams and waiting long polls an instance holds open at once, over all keys; more → 429
   * TOO_MANY_STREAMS. With EVENTS_STREAM_BUFFER_BYTES it bounds what slow readers can hold
   * (200 × 1 MiB) and what the waiting readers poll (one query per namespace per EVENTS_POLL_MS).
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100_000)
  EVENTS_MAX_STREAMS = 200;

  /**
   * Unsent bytes an instance holds for one stream; a stream that would hold more (its client
   * stopped reading) is closed, and its client resumes with Last-Event-ID.
   */
  @Type(() => Number)
  @IsInt()
  @Min(64 * 1024)
  @Max(64 * 1024 * 1024)
  EVENTS_STREAM_BUFFER_BYTES = 1024 * 1024;

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

  @Transform(({ value }: { value: unknown }) => value === true || value === 'true' || value === '1')
  TRUST_PROXY = false;

  /** Serve Swagger UI (/docs) and the OpenAPI document (/docs-json, /docs-yaml). */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  SWAGGER_ENABLED = true;

  /**
   * Create missing indexes of the service's own collections at start. Outside production mongoose
   * builds them as models load; in production only this step (or `npm run db:sync-indexes`) does.
   */
  @Transform(
    ({ value }: { value: unknown }) => value !== false && value !== 'false' && value !== '0',
  )
  SYNC_INDEXES = true;

  /** Browser origins allowed to call the API (CORS): `*` or a comma-separated list; unset = off. */
  @IsOptional()
  @Matches(/^(\*|https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*)$/, {
    message:
      'CORS_ORIGINS must be * or a comma-separated list of origins (https://app.example.com)',
  })
  CORS_ORIGINS?: string;

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
