import { Module, type DynamicModule } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { USAGE_TENANT, UsageInterceptor, type UsageTenantResolver } from './usage.interceptor';
import { UsageFlushDocument, UsageFlushSchema } from './usage-flush.schema';
import { UsageFlusher } from './usage-flusher';
import { UsageMeter } from './usage-meter';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';
import { UsageSweeper } from './usage-sweeper';

export interface UsageModuleOptions {
  /** Whose usage a request is (the composition root binds it to the auth principal). */
  tenantOf: UsageTenantResolver;
}

/**
 * Usage metering per tenant and UTC day (docs/usage.md): the meter every feature counts into,
 * the interceptor that counts requests (the composition root registers it globally), the
 * flusher that writes the counts in batches, the retention sweep, and UsageService to read them.
 * Global, so that a feature counts what only it sees (webhook deliveries) without wiring.
 */
@Module({})
export class UsageModule {
  static forRoot(options: UsageModuleOptions): DynamicModule {
    return {
      module: UsageModule,
      global: true,
      imports: [
        MongooseModule.forFeature([{ name: UsageFlushDocument.name, schema: UsageFlushSchema }]),
      ],
      providers: [
        UsageMeter,
        UsageRepository,
        UsageFlusher,
        UsageSweeper,
        UsageService,
        { provide: USAGE_TENANT, useValue: options.tenantOf },
        UsageInterceptor,
      ],
      exports: [UsageMeter, UsageService, UsageFlusher, UsageSweeper, UsageInterceptor],
    };
  }
}
