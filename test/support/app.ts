import type { INestApplication } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import type { Connection } from 'mongoose';
import request from 'supertest';
import { AppModule } from '../../src/app.module';
import { APP_OPTIONS, configureApp } from '../../src/app.setup';
import { loadConfig, type AppConfig } from '../../src/config';

export const TEST_ADMIN_KEY = 'test-operator-key-0123456789abcdefghijklmnop';

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  /** supertest agent bound to the app's HTTP server. */
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
    ...env,
    MONGODB_URI: uri,
  });
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot({ ...config, database: { ...config.database, uri } })],
  }).compile();
  const app = moduleRef.createNestApplication(APP_OPTIONS);
  configureApp(app, config);
  await app.init();
  const connection = app.get<Connection>(getConnectionToken());
  return {
    app,
    config,
    connection,
    http: () => request(app.getHttpServer()),
    close: async () => {
      await connection.dropDatabase().catch(() => undefined);
      await app.close();
    },
  };
}
