import { Module } from '@nestjs/common';
import { TenantKindMigration } from './tenant-kind.migration';

/**
 * Migrations of stored data, run at boot before the app listens. They read and write documents
 * directly rather than through the feature modules' services: they translate what an older
 * version of those modules wrote, which today's services no longer understand.
 */
@Module({ providers: [TenantKindMigration] })
export class MigrationsModule {}
