import { ConfigValidationError, loadConfig } from './app-config';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigValidationError');
}

describe('loadConfig', () => {
  it.each([
    [undefined, true],
    ['true', true],
    ['false', false],
    ['0', false],
  ])('reads SWAGGER_ENABLED=%s as %s', (value, expected) => {
    const env = value === undefined ? {} : { SWAGGER_ENABLED: value };
    expect(loadConfig(env).swaggerEnabled).toBe(expected);
  });

  it('gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      nodeEnv: 'development',
      port: 3000,
      logLevel: 'info',
      limits: {
        bodyBytes: 1048576,
        listDefault: 50,
        listMax: 500,
        maxCollections: 100,
        maxIndexes: 20,
        maxItemsPerCollection: null,
        rateLimitMax: 1000,
        rateLimitWindowMs: 60000,
        authFailureMax: 20,
        authFailureWindowMs: 60000,
        authFailureLookupIntervalMs: 1000,
        dataMaxDepth: 20,
        filterMaxConditions: 20,
        filterMaxInValues: 100,
        aggregateMaxGroups: 1000,
        bulkMaxItems: 500,
        importMaxLineBytes: 1024 * 1024,
        importMaxLines: 1_000_000,
        importMaxBytes: 1024 * 1024 * 1024,
        schemaMaxBytes: 64 * 1024,
        schemaMaxDepth: 16,
        schemaMultiUpdateMax: 1000,
        schemaMaxErrors: 20,
        schemaCacheSize: 500,
        profileJsonMaxBytes: 65536,
        profileJsonMaxDepth: 10,
      },
      database: {
        queryTimeoutMs: 5000,
        dbName: 'profile_data',
      },
    });
    expect(config.database.uri).toBeUndefined();
    expect(config.events).toMatchObject({
      maxStreamsPerKey: 10,
      maxStreams: 200,
      streamBufferBytes: 1048576,
    });
  });

  it('refuses stream limits below one and a stream buffer below 64 KiB', () => {
    expect(
      problemsOf({
        EVENTS_MAX_STREAMS_PER_KEY: '0',
        EVENTS_MAX_STREAMS: '0',
        EVENTS_STREAM_BUFFER_BYTES: '1000',
      }),
    ).toEqual([
      expect.stringContaining('EVENTS_MAX_STREAMS_PER_KEY'),
      expect.stringContaining('EVENTS_MAX_STREAMS'),
      expect.stringContaining('EVENTS_STREAM_BUFFER_BYTES'),
    ]);
  });

  it('converts numbers and treats empty strings as unset', () => {
    const config = loadConfig({
      PORT: '8080',
      MAX_INDEXES: '5',
      MAX_ITEMS_PER_COLLECTION: '7',
      MONGODB_URI: '',
      TRUST_PROXY: 'true',
    });
    expect(config.port).toBe(8080);
    expect(config.limits.maxIndexes).toBe(5);
    expect(config.limits.maxItemsPerCollection).toBe(7);
    expect(config.database.uri).toBeUndefined();
    expect(config.trustProxy).toBe(true);
  });

  it('lists every problem at once', () => {
    const problems = problemsOf({
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      MONGODB_URI: 'http://x',
      BODY_LIMIT: '1',
    });
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/PORT/);
    expect(problems.join('\n')).toMatch(/LOG_LEVEL/);
    expect(problems.join('\n')).toMatch(/MONGODB_URI/);
    expect(problems.join('\n')).toMatch(/BODY_LIMIT/);
  });

  it('requires ADMIN_API_KEY and MONGODB_URI in production', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems).toEqual([
      expect.stringContaining('ADMIN_API_KEY is required'),
      expect.stringContaining('MONGODB_URI is required'),
    ]);
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        ADMIN_API_KEY: 'k'.repeat(32),
        MONGODB_URI: 'mongodb://db:27017/',
      }),
    ).not.toThrow();
  });

  it('reads the failed-authentication budget and refuses a window under a second', () => {
    const config = loadConfig({ AUTH_FAILURE_MAX: '5', AUTH_FAILURE_WINDOW_MS: '2000' });
    expect(config.limits).toMatchObject({ authFailureMax: 5, authFailureWindowMs: 2000 });
    const problems = problemsOf({ AUTH_FAILURE_MAX: '0', AUTH_FAILURE_WINDOW_MS: '999' });
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toMatch(/AUTH_FAILURE_MAX/);
    expect(problems.join('\n')).toMatch(/AUTH_FAILURE_WINDOW_MS/);
    expect(problemsOf({ AUTH_FAILURE_MAX: 'many' })).toEqual([
      expect.stringContaining('AUTH_FAILURE_MAX'),
    ]);
  });

  describe('the database', () => {
    const dbOf = (env: NodeJS.ProcessEnv) => loadConfig(env).database;

    it.each([
      [{}, 'profile_data', 'default'],
      [{ MONGODB_URI: 'mongodb://db:27017/' }, 'profile_data', 'default'],
      [{ MONGODB_URI: 'mongodb://db:27017' }, 'profile_data', 'default'],
      [{ MONGODB_DB_NAME: 'other' }, 'other', 'MONGODB_DB_NAME'],
      [
        { MONGODB_URI: 'mongodb://db:27017/', MONGODB_DB_NAME: 'other' },
        'other',
        'MONGODB_DB_NAME',
      ],
      [{ MONGODB_URI: 'mongodb://db:27017/staging' }, 'staging', 'uri'],
      [
        { MONGODB_URI: 'mongodb://u:p@a:1,b:2/staging?replicaSet=rs0&authSource=admin' },
        'staging',
        'uri',
      ],
      [
        { MONGODB_URI: 'mongodb+srv://u:p@cluster.example.net/staging?retryWrites=true' },
        'staging',
        'uri',
      ],
      [{ MONGODB_URI: 'mongodb://db/staging', MONGODB_DB_NAME: 'staging' }, 'staging', 'uri'],
    ])('with %j uses %s (from %s)', (env, name, source) => {
      expect(dbOf(env)).toMatchObject({ dbName: name, dbNameSource: source });
    });

    it('refuses a URI database and a different MONGODB_DB_NAME, saying which to change', () => {
      const problems = problemsOf({
        MONGODB_URI: 'mongodb://db:27017/staging',
        MONGODB_DB_NAME: 'profile_data',
      });
      expect(problems).toEqual([
        expect.stringMatching(
          /"staging".*MONGODB_DB_NAME is "profile_data".*unset MONGODB_DB_NAME/,
        ),
      ]);
    });

    it.each(['admin', 'local', 'config'])('refuses %s as the service database', (name) => {
      expect(problemsOf({ MONGODB_URI: `mongodb://db:27017/${name}` })).toEqual([
        expect.stringMatching(new RegExp(`"${name}".*authSource=admin`)),
      ]);
      expect(problemsOf({ MONGODB_DB_NAME: name })).toEqual([
        expect.stringContaining('MONGODB_DB_NAME names'),
      ]);
    });

    it('refuses a URI database name outside the supported characters', () => {
      expect(problemsOf({ MONGODB_URI: 'mongodb://db:27017/has.dot' })).toEqual([
        expect.stringContaining("MONGODB_URI's path must name a database"),
      ]);
    });

    it('waits 30 s for the database at start, 10 s an attempt, and never starts fresh on its own', () => {
      expect(dbOf({})).toMatchObject({
        bootTimeoutMs: 30_000,
        bootAttemptTimeoutMs: 10_000,
        allowFreshStart: false,
      });
      expect(
        dbOf({
          DB_BOOT_TIMEOUT_MS: '5000',
          DB_BOOT_ATTEMPT_TIMEOUT_MS: '3000',
          DB_ALLOW_FRESH_START: 'true',
        }),
      ).toMatchObject({ bootTimeoutMs: 5000, bootAttemptTimeoutMs: 3000, allowFreshStart: true });
      expect(problemsOf({ DB_BOOT_TIMEOUT_MS: '10' })).toEqual([
        expect.stringContaining('DB_BOOT_TIMEOUT_MS'),
      ]);
      expect(problemsOf({ DB_BOOT_ATTEMPT_TIMEOUT_MS: '10' })).toEqual([
        expect.stringContaining('DB_BOOT_ATTEMPT_TIMEOUT_MS'),
      ]);
    });
  });

  it('reads the lookup interval of over-budget addresses and refuses one under 100 ms', () => {
    expect(
      loadConfig({ AUTH_FAILURE_LOOKUP_INTERVAL_MS: '250' }).limits.authFailureLookupIntervalMs,
    ).toBe(250);
    expect(problemsOf({ AUTH_FAILURE_LOOKUP_INTERVAL_MS: '99' })).toEqual([
      expect.stringContaining('AUTH_FAILURE_LOOKUP_INTERVAL_MS'),
    ]);
  });

  it('keeps rate-limit counters in the database by default in production only', () => {
    const production = {
      NODE_ENV: 'production',
      ADMIN_API_KEY: 'k'.repeat(32),
      MONGODB_URI: 'mongodb://db/',
    };
    expect(loadConfig({}).limits.rateLimitStore).toBe('memory');
    expect(loadConfig({ NODE_ENV: 'test' }).limits.rateLimitStore).toBe('memory');
    expect(loadConfig(production).limits.rateLimitStore).toBe('mongo');
    expect(loadConfig({ ...production, RATE_LIMIT_STORE: 'memory' }).limits.rateLimitStore).toBe(
      'memory',
    );
    expect(loadConfig({ RATE_LIMIT_STORE: 'mongo' }).limits.rateLimitStore).toBe('mongo');
    expect(problemsOf({ RATE_LIMIT_STORE: 'redis' })).toEqual([
      expect.stringContaining('RATE_LIMIT_STORE'),
    ]);
    expect(problemsOf({ RATE_LIMIT_MAX: '1000000001' })).toEqual([
      expect.stringContaining('RATE_LIMIT_MAX'),
    ]);
  });

  it('reads the metrics and tracing settings', () => {
    expect(loadConfig({})).toMatchObject({
      metrics: { enabled: true, databaseCommands: false },
      tracing: {},
    });
    expect(loadConfig({}).metrics.token).toBeUndefined();
    expect(loadConfig({}).tracing.otlpEndpoint).toBeUndefined();
    const config = loadConfig({
      METRICS_ENABLED: 'false',
      METRICS_TOKEN: 't'.repeat(16),
      METRICS_DATABASE_COMMANDS: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    });
    expect(config.metrics).toEqual({
      enabled: false,
      token: 't'.repeat(16),
      databaseCommands: true,
    });
    expect(config.tracing).toEqual({ otlpEndpoint: 'http://collector:4318' });
    expect(problemsOf({ METRICS_TOKEN: 'short' })).toEqual([
      'METRICS_TOKEN must be at least 16 characters',
    ]);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
    ]);
  });

  it('reads no development database settings (tools/dev-database does)', () => {
    const config = loadConfig({ EMBEDDED_DB: 'not-a-kind', FERRETDB_VERSION: 'latest' });
    expect(Object.keys(config.database).sort()).toEqual([
      'allowFreshStart',
      'bootAttemptTimeoutMs',
      'bootTimeoutMs',
      'dbName',
      'dbNameSource',
      'queryTimeoutMs',
      'retryAfterSeconds',
      'serverSelectionTimeoutMs',
      'uri',
    ]);
  });

  it('refuses a default page size above the maximum', () => {
    expect(problemsOf({ LIST_LIMIT_DEFAULT: '600' })).toEqual([
      'LIST_LIMIT_DEFAULT must not exceed LIST_LIMIT_MAX',
    ]);
  });
});
