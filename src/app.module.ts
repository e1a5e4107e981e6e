import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { AdminModule } from './admin/admin.module';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthModule } from './auth/auth.module';
import { isPublishableRequest, rateLimitTrackerOf } from './auth/rate-limit-tracker';
import { KeyThrottlerGuard, RateLimitModule } from './rate-limit';
import { TenantRequestAllowance } from './tenant-request-allowance';
import { ProblemFilter } from './common/errors';
import { boundedDriverOptions } from './common/mongo/bounded-driver-options';
import { MainConnectionModule } from './database-connection';
import { BackgroundTasksModule } from './common/scheduling/background-tasks';
import { IdempotencyGuard, IdempotencyModule } from './idempotency';
import { idempotencyScopeOf } from './auth/idempotency-scope';
import { usageTenantOf } from './auth/usage-tenant';
import { ConfigModule, type AppConfig } from './config';
import { CollectionGrantGuard } from './data/collections/collection-grant';
import { DataModule } from './data/data.module';
import { SCHEMA_WARNINGS_HEADER } from './data/rules/schema/schema-warnings';
import { FilesModule } from './files';
import { MeModule } from './me/me.module';
import { HealthModule } from './health/health.module';
import { MetricsModule, monitoredConnection, ServiceMetrics } from './metrics';
import { MigrationsModule } from './migrations/migrations.module';
import { PlansModule } from './plans';
import { ProfileAndTeamPlanHolders } from './plan-holders';
import { ClusterIdempotencyStores, PlacementModule } from './placement';
import { ProfileModule } from './profile/profile.module';
import { ProfileService } from './profile/profile.service';
import { ProjectModule } from './project/project.module';
import { EventsModule } from './events';
import { WebhooksModule } from './webhooks/webhooks.module';
import { LifecycleModule } from './lifecycle';
import { TeamModule, TeamService } from './team';
import { IdentityModule, TokenIdentities } from './identity';
import { UsageGuard, UsageModule } from './usage';
import { TenantGaugeSources } from './usage-gauge-sources';

/** The root module; `config.database.uri` is the database to connect to (MONGODB_URI, or the one `npm start` hands in). */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig & { database: { uri: string } }): DynamicModule {
    // One per app: the database connection feeds it from before it connects.
    const metrics = config.metrics.enabled ? new ServiceMetrics() : undefined;
    const monitored = monitoredConnection(metrics, config.metrics.databaseCommands);
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        MainConnectionModule.forRoot({
          uri: config.database.uri,
          driver: {
            dbName: config.database.dbName,
            ...boundedDriverOptions(config.database),
            monitorCommands: monitored.monitorCommands,
          },
          // Production builds indexes only in an explicit step (IndexSync: at start unless
          // SYNC_INDEXES=false, or `npm run db:sync-indexes`), never as a side effect of a model
          // loading: building an index on a large collection is an operation to plan.
          autoIndex: config.nodeEnv !== 'production',
          watch: monitored.watch,
          attempts: 3,
          retryDelayMs: 1000,
        }),
        RateLimitModule.forRoot({
          trackerOf: rateLimitTrackerOf,
          isPublishable: isPublishableRequest,
          allowance: TenantRequestAllowance,
        }),
        PlacementModule.forRoot((client) => metrics?.database.watch(client)),
        BackgroundTasksModule,
        MigrationsModule,
        // Plans read users' and teams' plan entries through their port, bound here.
        PlansModule.register({
          imports: [ProfileModule, TeamModule],
          holders: ProfileAndTeamPlanHolders,
        }),
        HealthModule,
        MetricsModule.forRoot(metrics),
        AuthModule.register({
          imports: [ProfileModule, TeamModule, IdentityModule],
          subProfiles: ProfileService,
          teamMemberships: TeamService,
          tokenPrincipals: TokenIdentities,
        }),
        IdempotencyModule.forRoot({
          scopeOf: idempotencyScopeOf,
          stores: ClusterIdempotencyStores,
          keptHeaders: [SCHEMA_WARNINGS_HEADER],
        }),
        // The daily snapshot of stored items and file bytes reads them through a port bound here.
        UsageModule.forRoot({ tenantOf: usageTenantOf, gauges: TenantGaugeSources }),
        // The features. Their order means nothing: no two modules' routes overlap, and where a
        // module's routes sit in Express's list costs about 24 ns per route passed over
        // (docs/benchmarks.md, "Module order").
        ProfileModule,
        TeamModule,
        ProjectModule,
        DataModule,
        FilesModule,
        EventsModule,
        WebhooksModule,
        LifecycleModule,
        MeModule,
        AdminModule,
      ],
      providers: [
        // Guards run in this order: authentication, the rate limit of the key it accepted, the
        // key's collection limit (routes with a {collection}), the metering of what they all
        // admitted (every request a route handles is counted for its tenant: USAGE_ENABLED,
        // docs/usage.md), then the Idempotency-Key of a write that takes one (a repeat is
        // answered there with the kept response, counted like any request). Wrong keys never
        // reach the rate limit: they are the failed-authentication budget's, whose database work
        // per address is bounded, where counting each new wrong key in the rate limit's store
        // cost a read and an insert per guess.
        { provide: APP_GUARD, useExisting: ApiKeyGuard },
        { provide: APP_GUARD, useExisting: KeyThrottlerGuard },
        { provide: APP_GUARD, useExisting: CollectionGrantGuard },
        { provide: APP_GUARD, useExisting: UsageGuard },
        { provide: APP_GUARD, useExisting: IdempotencyGuard },
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
    };
  }
}
