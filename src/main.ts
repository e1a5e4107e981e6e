// First: tracing, when on, must patch http, express and mongodb before they load.
import { shutdownTracing } from './tracing';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server, ServerResponse } from 'node:http';
import { AppModule } from './app.module';
import { APP_OPTIONS, configureApp, createHttpAdapter } from './app.setup';
import { generateApiKey } from './auth/api-key.secret';
import { createLogger } from './common/http/logger';
import { heapGrowthBound } from './common/memory/heap-growth';
import { awaitDatabase, DatabaseBootError, retryUntilReachable } from './database-boot';
import { ConfigValidationError, loadConfig, loadDotEnvFile, type AppConfig } from './config';
import { ShutdownState } from './health/shutdown.state';

/** A database started for this process by a development launcher; stopped after the app closes. */
export interface StartedDatabase {
  uri: string;
  description: string;
  stop(): Promise<void>;
}

/**
 * Hands the service its database, given MONGODB_URI as validated (a starter may use it as is).
 * Only the development launcher (tools/dev-database, behind `npm start`) passes one, booting this
 * module in its own process with settings of its own; on its own the service never starts a
 * database and connects to MONGODB_URI.
 */
export type DatabaseStarter = (
  uri: string | undefined,
  log: (message: string) => void,
) => Promise<StartedDatabase>;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** The description is logged and printed; a password in MONGODB_URI must not be. */
function redact(uri: string): string {
  try {
    const url = new URL(uri);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return uri.replace(/\/\/[^@/]*@/, '//***@');
  }
}

function externalDatabase(uri: string | undefined): StartedDatabase {
  // Production never gets here without it: loadConfig refuses to.
  if (!uri) {
    fail(
      [
        'MONGODB_URI is not set. `node dist/main.js` only connects to a MongoDB server:',
        '  - set MONGODB_URI=mongodb://host:27017/ (any MongoDB 6+ server), or',
        '  - run `npm start`, which starts a development database when MONGODB_URI is not set',
      ].join('\n'),
    );
  }
  return { uri, description: `MongoDB at ${redact(uri)}`, stop: () => Promise.resolve() };
}

function readConfig(): AppConfig {
  loadDotEnvFile();
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigValidationError) fail(error.message);
    throw error;
  }
}

/**
 * Creates and initialises the app once the database answers: a start waits for a slow or not yet
 * started database for up to DB_BOOT_TIMEOUT_MS (and retries an initialisation that lost it on
 * the way), so a rollout or a cold start does not crash-loop; request-time bounds stay those of
 * boundedDriverOptions. Fails with a DatabaseBootError (one line) when it gives up.
 */
async function startApp(
  config: AppConfig,
  uri: string,
  log: ReturnType<typeof createLogger>,
): Promise<INestApplication> {
  const options = {
    uri,
    deadline: Date.now() + config.database.bootTimeoutMs,
    timeoutMs: config.database.bootTimeoutMs,
    log,
  };
  await awaitDatabase(uri, config.database, options.deadline, log);
  return retryUntilReachable(
    'starting the service',
    async () => {
      // abortOnError: false, so that a failed initialisation is thrown here, not a process abort.
      const app = await NestFactory.create(
        AppModule.forRoot({ ...config, database: { ...config.database, uri } }),
        createHttpAdapter(),
        { ...APP_OPTIONS, abortOnError: false },
      );
      try {
        configureApp(app, config);
        await app.init();
        return app;
      } catch (error) {
        await app.close().catch(() => undefined);
        throw error;
      }
    },
    options,
  );
}

export async function bootstrap(startDatabase?: DatabaseStarter): Promise<void> {
  const config = readConfig();
  const log = createLogger(config);
  heapGrowthBound.configure(config.heapGrowthPercent);

  // Development convenience: without ADMIN_API_KEY a key is generated for this run and printed
  // once. loadConfig already refused to get here in production without one.
  const generatedAdminKey = config.adminApiKey ? undefined : generateApiKey().secret;
  config.adminApiKey ??= generatedAdminKey;

  const database = startDatabase
    ? await startDatabase(config.database.uri, (message) => log.info(message))
    : externalDatabase(config.database.uri);

  const app = await startApp(config, database.uri, log).catch(async (error: unknown) => {
    await database.stop().catch(() => undefined);
    if (error instanceof DatabaseBootError) fail(error.message);
    throw error;
  });
  // An import's body arrives for as long as the import runs; Node's default (300 s) would cut it.
  (app.getHttpServer() as Server).requestTimeout = config.requestTimeoutMs;
  await app.listen(config.port, config.host);

  const url = (await app.getUrl()).replace('[::1]', 'localhost').replace('127.0.0.1', 'localhost');
  log.info({ url, docs: `${url}/docs`, database: database.description }, `listening on ${url}`);
  // Outside development stdout is JSON lines only: the log line above is the banner there.
  if (config.nodeEnv === 'development') {
    process.stdout.write(
      [
        '',
        `  Service:  ${url}`,
        `  API docs: ${url}/docs`,
        `  Database: ${database.description}`,
        // Last, so that it is on screen when the start is done.
        ...(generatedAdminKey
          ? [
              `  Operator key (generated for this run; set ADMIN_API_KEY to choose one): ${generatedAdminKey}`,
            ]
          : []),
        '',
      ].join('\n') + '\n',
    );
  }

  const drain = drainer(app.getHttpServer() as Server);
  const shutdownState = app.get(ShutdownState);
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    // A stuck connection must not keep a terminating container alive forever.
    setTimeout(() => {
      log.error('shutdown timed out, exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    shutdownState.startDraining();
    // HTTP first, then the app: app.close() closes the database connection, which in-flight
    // requests still need.
    void drain()
      .then(() => app.close())
      .then(() => shutdownTracing())
      .then(() => database.stop())
      .then(() => {
        log.info('shut down');
        process.exit(0);
      })
      .catch((error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

/** How often idle kept-alive connections are closed while draining. */
const DRAIN_SWEEP_MS = 50;

/**
 * Graceful drain of the HTTP server. Until called, it only tracks open responses. When called:
 * the listener closes (new connections are refused), every response not yet sent — the ones in
 * flight and any request still arriving on a kept-alive connection — gets `Connection: close`,
 * so each connection ends after its current response, and idle connections are closed as soon
 * as they are idle. Resolves when the last connection has ended. Node's own server.close() only
 * closes the connections idle at that moment; without the header a keep-alive client would keep
 * sending requests for the whole shutdown timeout.
 */
function drainer(server: Server): () => Promise<void> {
  const open = new Set<ServerResponse>();
  let draining = false;
  // Prepended, so it runs before the application sees the request.
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
    open.add(res);
    res.once('close', () => open.delete(res));
  });
  return () =>
    new Promise<void>((resolve) => {
      draining = true;
      for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
      const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS);
      server.close(() => {
        clearInterval(sweep);
        resolve();
      });
      server.closeIdleConnections();
    });
}

// `node dist/main.js`; a launcher that requires this module calls bootstrap itself.
if (require.main === module) void bootstrap();
