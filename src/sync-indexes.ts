import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import { AppModule } from './app.module';
import { ConfigValidationError, loadConfig } from './config';
import { syncIndexes } from './migrations/index-sync';

/**
 * `npm run db:sync-indexes`: creates the missing indexes of the service's own collections on
 * MONGODB_URI and exits — the explicit step of a deployment that starts with SYNC_INDEXES=false.
 */
async function run(): Promise<void> {
  const config = loadConfig();
  const uri = config.database.uri;
  if (!uri) {
    process.stderr.write('MONGODB_URI is not set: db:sync-indexes syncs the database it names.\n');
    process.exit(1);
  }
  const app = await NestFactory.createApplicationContext(
    // A one-shot step: nothing to scrape, so no metrics collected either.
    AppModule.forRoot({
      ...config,
      syncIndexes: false,
      metrics: { enabled: false, databaseCommands: false },
      database: { ...config.database, uri },
    }),
    { logger: ['error', 'warn'] },
  );
  const synced = await syncIndexes(app.get<Connection>(getConnectionToken()));
  process.stdout.write(`indexes in sync: ${synced.join(', ')}\n`);
  await app.close();
}

run().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigValidationError ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
