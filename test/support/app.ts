import type { INestApplication } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import type { Collection, Db, Document } from 'mongodb';
import type { Connection } from 'mongoose';
import type { OpenAPIV3 } from 'openapi-types';
import request from 'supertest';
import { AppModule } from '../../src/app.module';
import { APP_OPTIONS, configureApp, createHttpAdapter, openApiDocument } from '../../src/app.setup';
import {
  TenantStorage,
  type NativeCollection,
  type StoredItem,
} from '../../src/data/storage/tenant-storage';
import { awaitDatabase, retryUntilReachable } from '../../src/database-boot';
import { DataClusters } from '../../src/placement';
import { loadConfig, type AppConfig } from '../../src/config';
import { recordMetricSeries } from './metric-series';
import { OpenApiResponseValidator } from './openapi-validator';

export const TEST_ADMIN_KEY = 'test-operator-key-0123456789abcdefghijklmnop';

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  /**
   * supertest agent bound to the app's HTTP server. Every response it receives is checked
   * against the app's OpenAPI document (see checkedAgent).
   */
  http: () => ReturnType<typeof request>;
  connection: Connection;
  close(): Promise<void>;
}

/** A database name unique to the calling test file and run. */
export function uniqueDbName(testFile: string): string {
  const slug = basename(testFile)
    .replace(/\.e2e-spec\.ts$/, '')
    .replace(/[^A-Za-z0-9]/g, '_')
    .slice(0, 24);
  return `t_${slug}_${randomBytes(4).toString('hex')}`;
}

export function testDatabaseUri(): string {
  const uri = process.env.TEST_MONGODB_URI;
  if (!uri)
    throw new Error(
      'TEST_MONGODB_URI is not set: run e2e tests through jest (global setup resolves the database)',
    );
  return uri;
}

/**
 * The real application (same module and configureApp as main.ts) on its own database.
 * `env` overrides configuration variables, e.g. `{ RATE_LIMIT_MAX: '3' }`.
 */
export async function createTestApp(
  testFile: string,
  env: Record<string, string> = {},
): Promise<TestApp> {
  const uri = env.MONGODB_URI ?? testDatabaseUri();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    MONGODB_DB_NAME: uniqueDbName(testFile),
    RATE_LIMIT_MAX: '1000000',
    AUTH_FAILURE_MAX: '1000000',
    // The app is compiled and initialised on this process's event loop while its first
    // connections are made: building the module graph blocks the loop for up to half a second
    // here, more on a loaded machine, which a 1 s connect timeout (half the 2 s default) does not
    // always survive. The tests of the bounds under a dead or frozen database set their own.
    DB_SERVER_SELECTION_TIMEOUT_MS: '5000',
    // Usage metering writes documents naming the tenant at times of its own (a flush every
    // USAGE_FLUSH_MS, and at close, after the test's databases are dropped): off unless a test
    // of it turns it on, so that a scan or a dump of the databases sees only what the test did.
    USAGE_ENABLED: 'false',
    ...env,
    MONGODB_URI: uri,
  });
  // Started as `node dist/main.js` starts: a first ping with the boot attempts' own timeouts,
  // then the app, whose first connection is retried if it times out (this process's loop
  // blocked by a loaded machine), for up to the service's own boot bound.
  const deadline = Date.now() + config.database.bootTimeoutMs;
  const quiet = { warn: () => undefined };
  await awaitDatabase(uri, config.database, deadline, quiet);
  const app = await retryUntilReachable(
    'starting the test app',
    async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [AppModule.forRoot({ ...config, database: { ...config.database, uri } })],
      }).compile();
      const created = moduleRef.createNestApplication(createHttpAdapter(), APP_OPTIONS);
      try {
        configureApp(created, config);
        await created.init();
        return created;
      } catch (error) {
        await created.close().catch(() => undefined);
        throw error;
      }
    },
    {
      uri,
      deadline,
      timeoutMs: config.database.bootTimeoutMs,
      log: quiet,
    },
  );
  const connection = app.get<Connection>(getConnectionToken());
  let validator: OpenApiResponseValidator | undefined;
  return {
    app,
    config,
    connection,
    http: () => checkedAgent(request(app.getHttpServer()), () => (validator ??= documentOf(app))),
    close: async () => {
      await recordMetricSeries(app);
      for (const db of await tenantDatabases({ app, connection })) {
        await db.dropDatabase().catch(() => undefined);
      }
      await connection.dropDatabase().catch(() => undefined);
      await app.close();
    },
  };
}

/**
 * The native collection behind a registry entry (a document of `data_collections`), wherever
 * the tenant's placement put it.
 */
export function nativeCollection(
  t: Pick<TestApp, 'app'>,
  entry: Record<string, unknown> | null,
): Collection<StoredItem> {
  return t.app.get(TenantStorage).itemsOf(nativeOf(entry));
}

/** A collection the service keeps beside the entry's native one (`data_unique_claims`). */
export function companionCollection<T extends Document = Document>(
  t: Pick<TestApp, 'app'>,
  entry: Record<string, unknown> | null,
  name: string,
): Collection<T> {
  return t.app.get(TenantStorage).companionOf<T>(nativeOf(entry), name);
}

function nativeOf(entry: Record<string, unknown> | null): NativeCollection {
  if (typeof entry?.physical !== 'string') throw new Error('no such registry entry');
  return {
    physical: entry.physical,
    ...(typeof entry.cluster === 'string' ? { cluster: entry.cluster } : {}),
    ...(typeof entry.database === 'string' ? { database: entry.database } : {}),
  };
}

/** The databases of the app's placed tenants on the clusters it is configured with. */
export async function tenantDatabases(t: Pick<TestApp, 'app' | 'connection'>): Promise<Db[]> {
  const clusters = t.app.get(DataClusters);
  const placements = await t.connection
    .collection<{ _id: string; cluster: string }>('tenant_placements')
    .find()
    .toArray();
  return placements
    .filter((placement) => clusters.get(placement.cluster))
    .map(({ _id: database, cluster }) => clusters.database({ cluster, database }));
}

/** The main database and every placed tenant's: all the app has written. */
export async function everyDatabase(t: Pick<TestApp, 'app' | 'connection'>): Promise<Db[]> {
  const main = t.connection.db;
  if (!main) throw new Error('the database connection is not open');
  return [main, ...(await tenantDatabases(t))];
}

/** The document the app serves (/docs-json), built the way configureApp builds it. */
function documentOf(app: INestApplication): OpenApiResponseValidator {
  return new OpenApiResponseValidator(openApiDocument(app) as unknown as OpenAPIV3.Document);
}

type Agent = ReturnType<typeof request>;
type Assert = (resError: unknown, res: request.Response | undefined, fn?: AssertCallback) => void;
type AssertCallback = (this: unknown, err: unknown, res: request.Response | undefined) => void;

/**
 * Wraps every request the agent starts so that, once the test's own expectations have passed,
 * the response is checked against the document; a disagreement fails the request like a failed
 * `.expect()`. The test's own failure, if any, is reported first.
 */
function checkedAgent(agent: Agent, validator: () => OpenApiResponseValidator): Agent {
  const wrapped: Record<string, unknown> = { ...(agent as unknown as Record<string, unknown>) };
  for (const [name, start] of Object.entries(agent as unknown as Record<string, unknown>)) {
    if (typeof start !== 'function') continue;
    wrapped[name] = (...args: unknown[]) => {
      const test = (start as (...a: unknown[]) => request.Test).apply(agent, args);
      const original = (test as unknown as { assert: Assert }).assert.bind(test);
      (test as unknown as { assert: Assert }).assert = (resError, res, fn) =>
        original(resError, res, function (this: unknown, err, checkedRes) {
          if (!err && checkedRes) {
            const findings = validator().check({
              method: (test as unknown as { method: string }).method,
              url: (test as unknown as { url: string }).url,
              status: checkedRes.status,
              headers: checkedRes.headers,
              text: checkedRes.text ?? '',
              body: checkedRes.body,
            });
            if (findings.length > 0) {
              err = new Error(
                `Response disagrees with the OpenAPI document:\n${findings.join('\n')}`,
              );
            }
          }
          fn?.call(this, err, checkedRes);
        });
      return test;
    };
  }
  return wrapped as unknown as Agent;
}
