import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import type { UsageCounts } from './usage-counts';
import { UsageCounters } from './usage-counters';

/**
 * Where every metered thing is counted: in this instance's memory (UsageCounters), no database
 * command; UsageFlusher writes the counts in batches. With USAGE_ENABLED=false nothing is kept.
 */
@Injectable()
export class UsageMeter {
  readonly enabled: boolean;
  readonly counters = new UsageCounters();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.enabled = config.usage.enabled;
  }

  add(tenant: Tenant, counts: Partial<UsageCounts>): void {
    if (this.enabled) this.counters.add(tenant, counts);
  }
}
