import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { APP_OPTIONS, configureApp } from './app.setup';
import { generateApiKey } from './auth/api-key.secret';
import { createLogger } from './common/http/logger';
import { ConfigValidationError, loadConfig, loadDotEnvFile, type AppConfig } from './config';
import { DatabaseUnavailableError, resolveDatabase, type ResolvedDatabase } from './database';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
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

async function bootstrap(): Promise<void> {
  const config = readConfig();
  const log = createLogger(config);

  // Development convenience: without ADMIN_API_KEY a key is generated for this run and printed
  // once. loadConfig already refused to get here in production without one.
  const generatedAdminKey = config.adminApiKey ? undefined : generateApiKey().secret;
  config.adminApiKey ??= generatedAdminKey;

  let database: ResolvedDatabase;
  try {
    database = await resolveDatabase({
      ...config.database,
      log: (message) => log.info(message),
    });
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) fail(error.message);
    throw error;
  }

  const app = await NestFactory.create(
    AppModule.forRoot({ ...config, database: { ...config.database, uri: database.uri } }),
    APP_OPTIONS,
  );
  configureApp(app, config);
  await app.listen(config.port, config.host);

  const url = (await app.getUrl()).replace('[::1]', 'localhost').replace('127.0.0.1', 'localhost');
  log.info({ url, docs: `${url}/docs`, database: database.description }, `listening on ${url}`);
  process.stdout.write(
    [
      '',
      `  Service:  ${url}`,
      `  API docs: ${url}/docs`,
      `  Database: ${database.description}`,
      ...(generatedAdminKey
        ? [
            `  Operator key (generated for this run; set ADMIN_API_KEY to choose one): ${generatedAdminKey}`,
          ]
        : []),
      '',
    ].join('\n') + '\n',
  );

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
    void app
      .close()
      .then(() => database.stop())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

void bootstrap();
