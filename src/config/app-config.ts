import { parseDataClusters, type DataClusterConfig } from './data-clusters';
import { parseOidcIssuers, type OidcIssuerConfig } from './oidc-issuers';
import { resolveDatabaseName, type DatabaseName } from './database-name';
import { readEnvironment, type RuntimeVariables } from './environment';
import { moveProblems, moveSettings, type MoveSettings } from './environment/clusters';
import { filesConfigOf, type FilesConfig } from './environment/files';
import { schemaLimitsOf, type SchemaLimits } from './environment/limits';

export interface AppConfig {
  nodeEnv: RuntimeVariables['NODE_ENV'];
  port: number;
  host: string;
  logLevel: RuntimeVariables['LOG_LEVEL'];
  trustProxy: boolean;
  heapGrowthPercent: number;
  /** SWAGGER_ENABLED: whether /docs, /docs-json and /docs-yaml are served. */
  swaggerEnabled: boolean;
  /** CONSOLE_ENABLED: whether the web console is served at /console. */
  consoleEnabled: boolean;
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
  /** HTTP_REQUEST_TIMEOUT_MS: the longest a request may take to arrive whole (an import's body). */
  requestTimeoutMs: number;
  /** IDEMPOTENCY_*: how Idempotency-Key responses are kept (src/idempotency). */
  idempotency: {
    ttlMs: number;
    leaseMs: number;
    sweepIntervalMs: number;
    maxResponseBytes: number;
  };
  /** USAGE_*: usage metering per tenant and day (src/usage, docs/usage.md). */
  usage: {
    enabled: boolean;
    flushMs: number;
    retentionDays: number;
    /** The daily snapshot of stored gauges: from which UTC hour, how often polled, its lease. */
    snapshotHour: number;
    snapshotPollMs: number;
    snapshotLeaseMs: number;
  };
  adminApiKey?: string; // ADMIN_API_KEY; main.ts fills in a generated one in development
  apiKeyCache: { ttlMs: number; max: number }; // keys kept after a lookup (docs/security.md)
  rightsCheckMs: number; // STREAM_RIGHTS_CHECK_MS: open streams' rights (principal-rights.ts)
  /** What a key may be limited to, and how often its last use is written (src/auth). */
  apiKeys: {
    lastUsedIntervalMs: number;
    maxCollections: number;
    maxAllowedIps: number;
    /** Origins of a publishable key's `allowedOrigins` at most. */
    maxAllowedOrigins: number;
  };
  /** OIDC_*: the identity providers whose access tokens are accepted (src/auth/oidc). */
  oidc: {
    issuers: OidcIssuerConfig[];
    clockSkewS: number;
    /** OIDC_MAX_TOKEN_AGE_S; null: a token's age is not limited beyond its `exp`. */
    maxTokenAgeS: number | null;
    jwksMaxAgeMs: number;
    jwksCooldownMs: number;
    fetchTimeoutMs: number;
    tokenCacheSize: number;
    identityCacheMs: number;
  };
  database: {
    uri?: string;
    /** The database used: MONGODB_URI's, else MONGODB_DB_NAME, else `profile_data`. */
    dbName: string;
    dbNameSource: DatabaseName['source'];
    /** DB_ALLOW_FRESH_START: start on an empty URI-named database beside a used `profile_data`. */
    allowFreshStart: boolean;
    /** DB_BOOT_TIMEOUT_MS: how long a start waits for the database. */
    bootTimeoutMs: number;
    /** DB_BOOT_ATTEMPT_TIMEOUT_MS: connect and selection timeout of one attempt at start. */
    bootAttemptTimeoutMs: number;
    serverSelectionTimeoutMs: number;
    retryAfterSeconds: number;
    queryTimeoutMs: number;
  };
  /**
   * DATA_CLUSTERS, DATA_CLUSTER_POOL_SIZE: where tenant data lives (src/placement). Without
   * DATA_CLUSTERS, one cluster `default` on the main connection. MOVE_*: tenant moves.
   */
  clusters: MoveSettings & { list: DataClusterConfig[]; poolSize: number };
  /** The change feed (docs/events.md). */
  events: {
    enabled: boolean;
    retentionMs: number;
    pollMs: number;
    sweepMs: number;
    intentGraceMs: number;
    heartbeatMs: number;
    /** Streams and waiting long polls per key over every instance, and per instance (src/events/stream-slots.ts). */
    maxStreamsPerKey: number;
    /** The same for a publishable key. */
    maxStreamsPerPublishableKey: number;
    maxStreams: number;
    /** Unsent bytes held for one stream before it is closed as a slow reader. */
    streamBufferBytes: number;
    /** How long a key's stream slot outlives its instance (renewed every third of it). */
    streamLeaseMs: number;
  };
  /** Webhook deliveries (docs/events.md). */
  webhooks: {
    allowPrivate: boolean;
    timeoutMs: number;
    retryBaseMs: number;
    /** WEBHOOK_IDLE_POLL_MAX_MS: the ceiling of an idle instance's webhook rounds. */
    idlePollMaxMs: number;
    retryWindowMs: number;
    max: number;
  };
  /** FILE_*: file storage (docs/files.md). */
  files: FilesConfig;
  /** Collection drops, erasures and expiry (docs/data.md, docs/profiles.md). */
  lifecycle: {
    registryCacheMs: number;
    registryCacheSize: number;
    dropGraceMs: number;
    erasureLeaseMs: number;
    pollMs: number;
    /** SEARCH_BUILD_LEASE_MS and SEARCH_BUILD_BATCH (docs/data.md, "Search"). */
    searchBuildLeaseMs: number;
    searchBuildBatch: number;
    /** EXPIRY_SWEEP_MS and EXPIRY_MAX_SECONDS (docs/data.md, "Expiry"). */
    expirySweepMs: number;
    expiryMaxSeconds: number;
  };
  limits: {
    bodyBytes: number;
    rateLimitMax: number;
    /** A publishable key's requests per window, per key and client address. */
    rateLimitPublishableMax: number;
    rateLimitWindowMs: number;
    /** RATE_LIMIT_STORE (resolved: mongo in production unless set) and RATE_LIMIT_CHUNK. */
    rateLimitStore: 'mongo' | 'memory';
    rateLimitChunk: number;
    /** Failed authentications per client address per window, counted in the database. */
    authFailureMax: number;
    authFailureWindowMs: number;
    /** Least time between two key lookups of one over-budget address on one instance. */
    authFailureLookupIntervalMs: number;
    listDefault: number;
    listMax: number;
    maxCollections: number;
    maxIndexes: number;
    /** MAX_ITEMS_PER_COLLECTION; null (0 or unset): unlimited. */
    maxItemsPerCollection: number | null;
    /** PLAN_CACHE_MS: how long plan entries and the catalogue are trusted (src/plans). */
    planCacheMs: number;
    dataMaxDepth: number;
    /** Conditions in one data filter (query string or body), and values in one `in`/`nin`. */
    filterMaxConditions: number;
    filterMaxInValues: number;
    /** Protected fields per caller class in one collection's access rules. */
    accessMaxProtectedFields: number;
    searchMaxWordsPerItem: number;
    /** Ids one item may hold at one `expand` path (more: its references stay as they are). */
    expandMaxIdsPerItem: number;
    /** Fields one search configuration may name. */
    searchMaxFields: number;
    /** Groups one data aggregate answers with before it says it was cut. */
    aggregateMaxGroups: number;
    /** Items in one bulk create. */
    bulkMaxItems: number;
    /** POST /import: longest line, most lines, most bytes (encoded and decoded). */
    importMaxLineBytes: number;
    importMaxLines: number;
    importMaxBytes: number;
    profileJsonMaxBytes: number;
    profileJsonMaxDepth: number;
  } & SchemaLimits;
}

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

/**
 * Reads and validates the environment once. Every problem is reported together so an operator
 * fixes a broken deployment in one pass instead of one variable per restart.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const { vars, problems } = readEnvironment(env);
  const {
    runtime,
    observability,
    auth,
    oidc,
    database,
    clusters,
    limits,
    lifecycle,
    events,
    webhooks,
    files,
    idempotency,
    usage,
  } = vars;
  if (limits.LIST_LIMIT_DEFAULT > limits.LIST_LIMIT_MAX) {
    problems.push('LIST_LIMIT_DEFAULT must not exceed LIST_LIMIT_MAX');
  }
  if (runtime.NODE_ENV === 'production' && !auth.ADMIN_API_KEY) {
    problems.push('ADMIN_API_KEY is required when NODE_ENV=production (at least 32 characters)');
  }
  if (runtime.NODE_ENV === 'production' && !database.MONGODB_URI) {
    problems.push(
      'MONGODB_URI is required when NODE_ENV=production (embedded databases are for development and tests)',
    );
  }
  if (idempotency.IDEMPOTENCY_LEASE_MS > idempotency.IDEMPOTENCY_TTL_MS) {
    problems.push('IDEMPOTENCY_LEASE_MS must not exceed IDEMPOTENCY_TTL_MS');
  }
  if (lifecycle.COLLECTION_DROP_GRACE_MS <= lifecycle.REGISTRY_CACHE_MS) {
    problems.push('COLLECTION_DROP_GRACE_MS must exceed REGISTRY_CACHE_MS');
  }
  problems.push(...moveProblems(clusters, lifecycle.COLLECTION_DROP_GRACE_MS));
  const dbName = resolveDatabaseName(database.MONGODB_URI, database.MONGODB_DB_NAME);
  if ('problems' in dbName) problems.push(...dbName.problems);
  const dataClusters = parseDataClusters(clusters.DATA_CLUSTERS);
  if ('problems' in dataClusters) problems.push(...dataClusters.problems);
  const oidcIssuers = parseOidcIssuers(oidc.OIDC_ISSUERS);
  if ('problems' in oidcIssuers) problems.push(...oidcIssuers.problems);
  if (
    problems.length > 0 ||
    'problems' in dbName ||
    'problems' in dataClusters ||
    'problems' in oidcIssuers
  ) {
    throw new ConfigValidationError(problems);
  }

  return {
    nodeEnv: runtime.NODE_ENV,
    port: runtime.PORT,
    host: runtime.HOST,
    logLevel: runtime.LOG_LEVEL,
    trustProxy: runtime.TRUST_PROXY,
    heapGrowthPercent: runtime.HEAP_GROWTH_PERCENT,
    swaggerEnabled: runtime.SWAGGER_ENABLED,
    consoleEnabled: runtime.CONSOLE_ENABLED,
    syncIndexes: runtime.SYNC_INDEXES,
    corsOrigins:
      runtime.CORS_ORIGINS === '*'
        ? '*'
        : (runtime.CORS_ORIGINS?.split(',').map((o) => o.trim()) ?? []),
    metrics: {
      enabled: observability.METRICS_ENABLED,
      token: observability.METRICS_TOKEN,
      databaseCommands: observability.METRICS_DATABASE_COMMANDS,
    },
    tracing: { otlpEndpoint: observability.OTEL_EXPORTER_OTLP_ENDPOINT },
    shutdownTimeoutMs: runtime.SHUTDOWN_TIMEOUT_MS,
    requestTimeoutMs: runtime.HTTP_REQUEST_TIMEOUT_MS,
    idempotency: {
      ttlMs: idempotency.IDEMPOTENCY_TTL_MS,
      leaseMs: idempotency.IDEMPOTENCY_LEASE_MS,
      sweepIntervalMs: idempotency.IDEMPOTENCY_SWEEP_INTERVAL_MS,
      maxResponseBytes: idempotency.IDEMPOTENCY_MAX_RESPONSE_BYTES,
    },
    usage: {
      enabled: usage.USAGE_ENABLED,
      flushMs: usage.USAGE_FLUSH_MS,
      retentionDays: usage.USAGE_RETENTION_DAYS,
      snapshotHour: usage.USAGE_SNAPSHOT_HOUR,
      snapshotPollMs: usage.USAGE_SNAPSHOT_POLL_MS,
      snapshotLeaseMs: usage.USAGE_SNAPSHOT_LEASE_MS,
    },
    events: {
      enabled: events.EVENTS_ENABLED,
      retentionMs: events.EVENTS_RETENTION_MS,
      pollMs: events.EVENTS_POLL_MS,
      sweepMs: events.EVENTS_SWEEP_MS,
      intentGraceMs: events.EVENTS_INTENT_GRACE_MS,
      heartbeatMs: events.EVENTS_HEARTBEAT_MS,
      maxStreamsPerKey: events.EVENTS_MAX_STREAMS_PER_KEY,
      maxStreamsPerPublishableKey: events.EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY,
      maxStreams: events.EVENTS_MAX_STREAMS,
      streamBufferBytes: events.EVENTS_STREAM_BUFFER_BYTES,
      streamLeaseMs: events.EVENTS_STREAM_LEASE_MS,
    },
    webhooks: {
      allowPrivate: webhooks.WEBHOOK_ALLOW_PRIVATE,
      timeoutMs: webhooks.WEBHOOK_TIMEOUT_MS,
      retryBaseMs: webhooks.WEBHOOK_RETRY_BASE_MS,
      idlePollMaxMs: webhooks.WEBHOOK_IDLE_POLL_MAX_MS,
      retryWindowMs: webhooks.WEBHOOK_RETRY_WINDOW_MS,
      max: webhooks.WEBHOOK_MAX,
    },
    files: filesConfigOf(files),
    lifecycle: {
      registryCacheMs: lifecycle.REGISTRY_CACHE_MS,
      registryCacheSize: lifecycle.REGISTRY_CACHE_SIZE,
      dropGraceMs: lifecycle.COLLECTION_DROP_GRACE_MS,
      erasureLeaseMs: lifecycle.ERASURE_LEASE_MS,
      pollMs: lifecycle.LIFECYCLE_POLL_MS,
      searchBuildLeaseMs: lifecycle.SEARCH_BUILD_LEASE_MS,
      searchBuildBatch: lifecycle.SEARCH_BUILD_BATCH,
      expirySweepMs: lifecycle.EXPIRY_SWEEP_MS,
      expiryMaxSeconds: lifecycle.EXPIRY_MAX_SECONDS,
    },
    adminApiKey: auth.ADMIN_API_KEY,
    apiKeyCache: { ttlMs: auth.API_KEY_CACHE_MS, max: auth.API_KEY_CACHE_SIZE },
    rightsCheckMs: auth.STREAM_RIGHTS_CHECK_MS,
    apiKeys: {
      lastUsedIntervalMs: auth.API_KEY_LAST_USED_INTERVAL_MS,
      maxCollections: auth.API_KEY_MAX_COLLECTIONS,
      maxAllowedIps: auth.API_KEY_MAX_ALLOWED_IPS,
      maxAllowedOrigins: auth.API_KEY_MAX_ALLOWED_ORIGINS,
    },
    oidc: {
      issuers: oidcIssuers.issuers,
      clockSkewS: oidc.OIDC_CLOCK_SKEW_S,
      maxTokenAgeS: oidc.OIDC_MAX_TOKEN_AGE_S ?? null,
      jwksMaxAgeMs: oidc.OIDC_JWKS_MAX_AGE_MS,
      jwksCooldownMs: oidc.OIDC_JWKS_COOLDOWN_MS,
      fetchTimeoutMs: oidc.OIDC_FETCH_TIMEOUT_MS,
      tokenCacheSize: oidc.OIDC_TOKEN_CACHE_SIZE,
      identityCacheMs: oidc.OIDC_IDENTITY_CACHE_MS,
    },
    database: {
      uri: database.MONGODB_URI,
      dbName: dbName.name,
      dbNameSource: dbName.source,
      allowFreshStart: database.DB_ALLOW_FRESH_START,
      bootTimeoutMs: database.DB_BOOT_TIMEOUT_MS,
      bootAttemptTimeoutMs: database.DB_BOOT_ATTEMPT_TIMEOUT_MS,
      serverSelectionTimeoutMs: database.DB_SERVER_SELECTION_TIMEOUT_MS,
      retryAfterSeconds: database.DB_RETRY_AFTER_SECONDS,
      queryTimeoutMs: database.QUERY_TIMEOUT_MS,
    },
    clusters: {
      list: dataClusters.clusters,
      poolSize: clusters.DATA_CLUSTER_POOL_SIZE,
      ...moveSettings(clusters),
    },
    limits: {
      bodyBytes: limits.BODY_LIMIT,
      rateLimitMax: limits.RATE_LIMIT_MAX,
      rateLimitPublishableMax: limits.RATE_LIMIT_PUBLISHABLE_MAX,
      rateLimitWindowMs: limits.RATE_LIMIT_WINDOW_MS,
      rateLimitStore:
        limits.RATE_LIMIT_STORE ?? (runtime.NODE_ENV === 'production' ? 'mongo' : 'memory'),
      rateLimitChunk: limits.RATE_LIMIT_CHUNK,
      authFailureMax: auth.AUTH_FAILURE_MAX,
      authFailureWindowMs: auth.AUTH_FAILURE_WINDOW_MS,
      authFailureLookupIntervalMs: auth.AUTH_FAILURE_LOOKUP_INTERVAL_MS,
      listDefault: limits.LIST_LIMIT_DEFAULT,
      listMax: limits.LIST_LIMIT_MAX,
      maxCollections: limits.MAX_COLLECTIONS,
      maxIndexes: limits.MAX_INDEXES,
      maxItemsPerCollection: limits.MAX_ITEMS_PER_COLLECTION || null,
      planCacheMs: limits.PLAN_CACHE_MS,
      dataMaxDepth: limits.DATA_MAX_DEPTH,
      filterMaxConditions: limits.FILTER_MAX_CONDITIONS,
      filterMaxInValues: limits.FILTER_MAX_IN_VALUES,
      accessMaxProtectedFields: limits.ACCESS_MAX_PROTECTED_FIELDS,
      searchMaxWordsPerItem: limits.SEARCH_MAX_WORDS_PER_ITEM,
      expandMaxIdsPerItem: limits.EXPAND_MAX_IDS_PER_ITEM,
      searchMaxFields: limits.SEARCH_MAX_FIELDS,
      aggregateMaxGroups: limits.AGGREGATE_MAX_GROUPS,
      bulkMaxItems: limits.BULK_MAX_ITEMS,
      importMaxLineBytes: limits.IMPORT_MAX_LINE_BYTES,
      importMaxLines: limits.IMPORT_MAX_LINES,
      importMaxBytes: limits.IMPORT_MAX_BYTES,
      ...schemaLimitsOf(limits),
      profileJsonMaxBytes: limits.PROFILE_JSON_MAX_BYTES,
      profileJsonMaxDepth: limits.PROFILE_JSON_MAX_DEPTH,
    },
  };
}
