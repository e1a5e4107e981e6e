import { Module } from '@nestjs/common';
import { IndexSync } from './index-sync';
import { TenantKindMigration } from './tenant-kind.migration';

/**
 * Migrations of stored data, run at boot before the app listens. They read and write documents
 * directly rather than through the feature modules' services: they translate what an older
 * version of those modules wrote, which today's services no longer understand. IndexSync creates
 * the indexes of the service's own collections where mongoose does not (production).
 */
@Module({ providers: [TenantKindMigration, IndexSync] })
export class MigrationsModule {}
