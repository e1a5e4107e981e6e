import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { USAGE_TENANT, UsageGuard, type UsageTenantResolver } from './usage.guard';
import { UsageFlushDocument, UsageFlushSchema } from './usage-flush.schema';
import { UsageFlusher } from './usage-flusher';
import { UsageGaugeDocument, UsageGaugeSchema } from './usage-gauge.schema';
import { USAGE_GAUGE_SOURCE, type UsageGaugeSource } from './usage-gauges';
import { UsageGaugesRepository } from './usage-gauges.repository';
import { UsageSnapshotDocument, UsageSnapshotSchema } from './usage-snapshot.schema';
import { UsageSnapshotRepository } from './usage-snapshot.repository';
import { UsageSnapshots } from './usage-snapshots';
import { UsageMeter } from './usage-meter';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';
import { UsageSweeper } from './usage-sweeper';

export interface UsageModuleOptions {
  /** Whose usage a request is (the composition root binds it to the auth principal). */
  tenantOf: UsageTenantResolver;
  /** Where the daily snapshot reads what each tenant stores (the composition root binds it). */
  gauges: Type<UsageGaugeSource>;
}

/**
 * Usage metering per tenant and UTC day (docs/usage.md): the meter every feature counts into,
 * the guard that counts requests (the composition root registers it globally, after the
 * others), the flusher that writes the counts in batches, the daily snapshot of what each tenant
 * stores, the retention sweep, and UsageService to read them.
 * Global, so that a feature counts what only it sees (webhook deliveries) without wiring.
 */
@Module({})
export class UsageModule {
  static forRoot(options: UsageModuleOptions): DynamicModule {
    return {
      module: UsageModule,
      global: true,
      imports: [
        MongooseModule.forFeature([
          { name: UsageFlushDocument.name, schema: UsageFlushSchema },
          { name: UsageGaugeDocument.name, schema: UsageGaugeSchema },
          { name: UsageSnapshotDocument.name, schema: UsageSnapshotSchema },
        ]),
      ],
      providers: [
        UsageMeter,
        UsageRepository,
        UsageFlusher,
        UsageSweeper,
        UsageService,
        UsageGaugesRepository,
        UsageSnapshotRepository,
        UsageSnapshots,
        { provide: USAGE_TENANT, useValue: options.tenantOf },
        { provide: USAGE_GAUGE_SOURCE, useClass: options.gauges },
        UsageGuard,
      ],
      exports: [UsageMeter, UsageService, UsageFlusher, UsageSweeper, UsageSnapshots, UsageGuard],
    };
  }
}
