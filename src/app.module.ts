import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import { ThrottlerModule } from '@nestjs/throttler';
import { AdminModule } from './admin/admin.module';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthModule } from './auth/auth.module';
import { FixedWindowThrottlerStorage } from './common/http/fixed-window.storage';
import { KeyThrottlerGuard } from './auth/key-throttler.guard';
import { ProblemFilter } from './common/errors';
import { ConfigModule, type AppConfig } from './config';
import { DataModule } from './data/data.module';
import { HealthModule } from './health/health.module';
import { MigrationsModule } from './migrations/migrations.module';
import { ProfileModule } from './profile/profile.module';
import { ProfileService } from './profile/profile.service';
import { ProjectModule } from './project/project.module';

/**
 * Driver settings that bound every operation when the database is dead, frozen or partitioned
 * (an open connection to a stopped process never errors by itself). The installed driver ignores
 * `timeoutMS`, so the bound comes from server monitoring: a heartbeat every 500 ms on its own
 * connection, timing out after half the selection timeout, marks the server unknown and
 * interrupts every operation in flight on it; later operations then fail server selection. A
 * slow query on a healthy server is not cut short (the heartbeat still answers), so
 * QUERY_TIMEOUT_MS keeps its meaning; socketTimeoutMS is only a backstop above it. Retries are
 * off because a retry would wait a whole selection timeout again; the client gets 503 with
 * Retry-After instead.
 */
export function boundedDriverOptions(database: AppConfig['database']) {
  const selection = database.serverSelectionTimeoutMs;
  return {
    serverSelectionTimeoutMS: selection,
    heartbeatFrequencyMS: 500,
    connectTimeoutMS: Math.ceil(selection / 2),
    socketTimeoutMS: Math.max(database.queryTimeoutMs, selection) + selection,
    retryReads: false,
    retryWrites: false,
  };
}

/** The root module; `config.database.uri` is the database to connect to (MONGODB_URI, or the one `npm start` hands in). */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig & { database: { uri: string } }): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        MongooseModule.forRoot(config.database.uri, {
          dbName: config.database.dbName,
          ...boundedDriverOptions(config.database),
          // Fail fast instead of queueing operations while disconnected: a request gets a 503
          // within the server-selection timeout rather than hanging.
          bufferCommands: false,
          // Production builds indexes only in an explicit step (IndexSync: at start unless
          // SYNC_INDEXES=false, or `npm run db:sync-indexes`), never as a side effect of a model
          // loading: building an index on a large collection is an operation to plan.
          autoIndex: config.nodeEnv !== 'production',
          retryAttempts: 3,
          retryDelay: 1000,
        }),
        ThrottlerModule.forRoot({
          throttlers: [{ ttl: config.limits.rateLimitWindowMs, limit: config.limits.rateLimitMax }],
          storage: new FixedWindowThrottlerStorage(),
          // One budget per key across all routes (the default key is per key *and* route).
          generateKey: (_context, tracker) => tracker,
        }),
        MigrationsModule,
        HealthModule,
        AuthModule.register({ imports: [ProfileModule], subProfiles: ProfileService }),
        AdminModule,
        ProfileModule,
        ProjectModule,
        DataModule,
      ],
      providers: [
        // Guards run in this order: the rate limit first (it also limits bad keys), then auth.
        { provide: APP_GUARD, useClass: KeyThrottlerGuard },
        { provide: APP_GUARD, useExisting: ApiKeyGuard },
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
    };
  }
}
