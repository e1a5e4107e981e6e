import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { resolveDatabaseName, type DatabaseName } from './database-name';
import { EnvironmentVariables } from './environment';

export interface AppConfig {
  nodeEnv: EnvironmentVariables['NODE_ENV'];
  port: number;
  host: string;
  logLevel: EnvironmentVariables['LOG_LEVEL'];
  trustProxy: boolean;
  /** SWAGGER_ENABLED: whether /docs, /docs-json and /docs-yaml are served. */
  swaggerEnabled: boolean;
  /** SYNC_INDEXES: create missing indexes at start (production builds none implicitly). */
  syncIndexes: boolean;
  /** CORS_ORIGINS: '*', or the allowed origins; [] = CORS off. */
  corsOrigins: '*' | string[];
  /**
   * METRICS_ENABLED, METRICS_TOKEN, METRICS_DATABASE_COMMANDS: Prometheus metrics at /metrics,
   * optionally behind a token, with database command metrics when asked for.
   */
  metrics: { enabled: boolean; token?: string; databaseCommands: boolean };
  /** OTEL_EXPORTER_OTLP_ENDPOINT: tracing is on when set (see src/tracing.ts). */
  tracing: { otlpEndpoint?: string };
  shutdownTimeoutMs: number;
  /** IDEMPOTENCY_*: how Idempotency-Key responses are kept (src/common/idempotency). */
  idempotency: {
    ttlMs: number;
    leaseMs: number;
    sweepIntervalMs: number;
    maxResponseBytes: number;
  };
  /** Operator key from ADMIN_API_KEY; main.ts fills in a generated one in development. */
  adminApiKey?: string;
  /** API keys an instance keeps after a lookup (README, security). */
  apiKeyCache: { ttlMs: number; max: number };
  database: {
    uri?: string;
    /** The database used: MONGODB_URI's, else MONGODB_DB_NAME, else `profile_data`. */
    dbName: string;
    dbNameSource: DatabaseName['source'];
    /** DB_ALLOW_FRESH_START: start on an empty URI-named database beside a used `profile_data`. */
    allowFreshStart: boolean;
    /** DB_BOOT_TIMEOUT_MS: how long a start waits for the database. */
    bootTimeoutMs: number;
    serverSelectionTimeoutMs: number;
    retryAfterSeconds: number;
    queryTimeoutMs: number;
  };
  /** The change feed (docs/events.md). */
  events: {
    enabled: boolean;
    retentionMs: number;
    pollMs: number;
    sweepMs: number;
    intentGraceMs: number;
    heartbeatMs: number;
    /** Streams and waiting long polls per key and per instance (src/events/stream-slots.ts). */
    maxStreamsPerKey: number;
    maxStreams: number;
    /** Unsent bytes held for one stream before it is closed as a slow reader. */
    streamBufferBytes: number;
  };
  /** Webhook deliveries (docs/events.md). */
  webhooks: {
    allowPrivate: boolean;
    timeoutMs: number;
    retryBaseMs: number;
    retryWindowMs: number;
    max: number;
  };
  /** Collection drops and erasures (docs/data.md, docs/profiles.md). */
  lifecycle: {
    registryCacheMs: number;
    registryCacheSize: number;
    dropGraceMs: number;
    erasureLeaseMs: number;
    pollMs: number;
  };
  limits: {
    bodyBytes: number;
    rateLimitMax: number;
    rateLimitWindowMs: number;
    /** RATE_LIMIT_STORE, resolved: mongo when NODE_ENV=production unless set. */
    rateLimitStore: 'mongo' | 'memory';
    /** Failed authentications per client address per window, counted in the database. */
    authFailureMax: number;
    authFailureWindowMs: number;
    /** Least time between two key lookups of one over-budget address on one instance. */
    authFailureLookupIntervalMs: number;
    listDefault: number;
    listMax: number;
    maxCollections: number;
    maxIndexes: number;
    dataMaxDepth: number;
    /** Conditions in one data filter (query string or body), and values in one `in`/`nin`. */
    filterMaxConditions: number;
    filterMaxInValues: number;
    /** Groups one data aggregate answers with before it says it was cut. */
    aggregateMaxGroups: number;
    /** Items in one bulk create. */
    bulkMaxItems: number;
    profileJsonMaxBytes: number;
    profileJsonMaxDepth: number;
  };
}

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

function describe(errors: ValidationError[]): string[] {
  return errors.flatMap((e) =>
    Object.values(e.constraints ?? {}).map((message) =>
      message.startsWith(e.property) ? message : `${e.property}: ${message}`,
    ),
  );
}

/**
 * Reads and validates the environment once. Every problem is reported together so an operator
 * fixes a broken deployment in one pass instead of one variable per restart.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  // Empty strings mean "unset" (docker --env-file and compose often produce them).
  const present = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ''),
  );
  const vars = plainToInstance(EnvironmentVariables, present, { excludeExtraneousValues: false });
  const problems = describe(
    validateSync(vars, { forbidUnknownValues: false, stopAtFirstError: true }),
  );
  if (vars.LIST_LIMIT_DEFAULT > vars.LIST_LIMIT_MAX) {
    problems.push('LIST_LIMIT_DEFAULT must not exceed LIST_LIMIT_MAX');
  }
  if (vars.NODE_ENV === 'production' && !vars.ADMIN_API_KEY) {
    problems.push('ADMIN_API_KEY is required when NODE_ENV=production (at least 32 characters)');
  }
  if (vars.NODE_ENV === 'production' && !vars.MONGODB_URI) {
    problems.push(
      'MONGODB_URI is required when NODE_ENV=production (embedded databases are for development and tests)',
    );
  }
  if (vars.IDEMPOTENCY_LEASE_MS > vars.IDEMPOTENCY_TTL_MS) {
    problems.push('IDEMPOTENCY_LEASE_MS must not exceed IDEMPOTENCY_TTL_MS');
  }
  if (vars.COLLECTION_DROP_GRACE_MS <= vars.REGISTRY_CACHE_MS) {
    problems.push('COLLECTION_DROP_GRACE_MS must exceed REGISTRY_CACHE_MS');
  }
  const database = resolveDatabaseName(vars.MONGODB_URI, vars.MONGODB_DB_NAME);
  if ('problems' in database) problems.push(...database.problems);
  if (problems.length > 0 || 'problems' in database) throw new ConfigValidationError(problems);

  return {
    nodeEnv: vars.NODE_ENV,
    port: vars.PORT,
    host: vars.HOST,
    logLevel: vars.LOG_LEVEL,
    trustProxy: vars.TRUST_PROXY,
    swaggerEnabled: vars.SWAGGER_ENABLED,
    syncIndexes: vars.SYNC_INDEXES,
    corsOrigins:
      vars.CORS_ORIGINS === '*' ? '*' : (vars.CORS_ORIGINS?.split(',').map((o) => o.trim()) ?? []),
    metrics: {
      enabled: vars.METRICS_ENABLED,
      token: vars.METRICS_TOKEN,
      databaseCommands: vars.METRICS_DATABASE_COMMANDS,
    },
    tracing: { otlpEndpoint: vars.OTEL_EXPORTER_OTLP_ENDPOINT },
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS,
    idempotency: {
      ttlMs: vars.IDEMPOTENCY_TTL_MS,
      leaseMs: vars.IDEMPOTENCY_LEASE_MS,
      sweepIntervalMs: vars.IDEMPOTENCY_SWEEP_INTERVAL_MS,
      maxResponseBytes: vars.IDEMPOTENCY_MAX_RESPONSE_BYTES,
    },
    events: {
      enabled: vars.EVENTS_ENABLED,
      retentionMs: vars.EVENTS_RETENTION_MS,
      pollMs: vars.EVENTS_POLL_MS,
      sweepMs: vars.EVENTS_SWEEP_MS,
      intentGraceMs: vars.EVENTS_INTENT_GRACE_MS,
      heartbeatMs: vars.EVENTS_HEARTBEAT_MS,
      maxStreamsPerKey: vars.EVENTS_MAX_STREAMS_PER_KEY,
      maxStreams: vars.EVENTS_MAX_STREAMS,
      streamBufferBytes: vars.EVENTS_STREAM_BUFFER_BYTES,
    },
    webhooks: {
      allowPrivate: vars.WEBHOOK_ALLOW_PRIVATE,
      timeoutMs: vars.WEBHOOK_TIMEOUT_MS,
      retryBaseMs: vars.WEBHOOK_RETRY_BASE_MS,
      retryWindowMs: vars.WEBHOOK_RETRY_WINDOW_MS,
      max: vars.WEBHOOK_MAX,
    },
    lifecycle: {
      registryCacheMs: vars.REGISTRY_CACHE_MS,
      registryCacheSize: vars.REGISTRY_CACHE_SIZE,
      dropGraceMs: vars.COLLECTION_DROP_GRACE_MS,
      erasureLeaseMs: vars.ERASURE_LEASE_MS,
      pollMs: vars.LIFECYCLE_POLL_MS,
    },
    adminApiKey: vars.ADMIN_API_KEY,
    apiKeyCache: { ttlMs: vars.API_KEY_CACHE_MS, max: vars.API_KEY_CACHE_SIZE },
    database: {
      uri: vars.MONGODB_URI,
      dbName: database.name,
      dbNameSource: database.source,
      allowFreshStart: vars.DB_ALLOW_FRESH_START,
      bootTimeoutMs: vars.DB_BOOT_TIMEOUT_MS,
      serverSelectionTimeoutMs: vars.DB_SERVER_SELECTION_TIMEOUT_MS,
      retryAfterSeconds: vars.DB_RETRY_AFTER_SECONDS,
      queryTimeoutMs: vars.QUERY_TIMEOUT_MS,
    },
    limits: {
      bodyBytes: vars.BODY_LIMIT,
      rateLimitMax: vars.RATE_LIMIT_MAX,
      rateLimitWindowMs: vars.RATE_LIMIT_WINDOW_MS,
      rateLimitStore:
        vars.RATE_LIMIT_STORE ?? (vars.NODE_ENV === 'production' ? 'mongo' : 'memory'),
      authFailureMax: vars.AUTH_FAILURE_MAX,
      authFailureWindowMs: vars.AUTH_FAILURE_WINDOW_MS,
      authFailureLookupIntervalMs: vars.AUTH_FAILURE_LOOKUP_INTERVAL_MS,
      listDefault: vars.LIST_LIMIT_DEFAULT,
      listMax: vars.LIST_LIMIT_MAX,
      maxCollections: vars.MAX_COLLECTIONS,
      maxIndexes: vars.MAX_INDEXES,
      dataMaxDepth: vars.DATA_MAX_DEPTH,
      filterMaxConditions: vars.FILTER_MAX_CONDITIONS,
      filterMaxInValues: vars.FILTER_MAX_IN_VALUES,
      aggregateMaxGroups: vars.AGGREGATE_MAX_GROUPS,
      bulkMaxItems: vars.BULK_MAX_ITEMS,
      profileJsonMaxBytes: vars.PROFILE_JSON_MAX_BYTES,
      profileJsonMaxDepth: vars.PROFILE_JSON_MAX_DEPTH,
    },
  };
}

/** Loads `.env` from the working directory if there is one (values already set win). */
export function loadDotEnvFile(path = '.env'): void {
  try {
    process.loadEnvFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
