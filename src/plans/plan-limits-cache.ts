import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { activeEntry, type PlanEntry } from './plan-entry';
import { PLAN_HOLDERS, type PlanHolders } from './plan-holders.port';
import { deploymentLimits, limitsUnder, type LimitValues, type PlanLimits } from './plan-limits';
import { PlanRepository } from './plan.repository';
import { TenantLimits, type ActiveLimits } from './tenant-limits';
import { TimedCache } from './timed-cache';

/** Tenants whose plan entries an instance keeps at most (the least recently used go first). */
const TENANTS_KEPT = 10_000;

const CATALOGUE = 'catalogue';

/**
 * A tenant's limits from its active plan (docs/plans.md). Kept in this instance's memory for at
 * most PLAN_CACHE_MS, each read lazily when asked for after that (an idle instance reads nothing):
 * every tenant's plan entries (one read of its root profile or team), and the whole catalogue
 * (one read, only once some tenant has an active entry). No database read per request in the
 * steady state. The active entry is chosen at every call from the entries kept, so an `until`
 * that passes takes effect at once; a change written through this instance is forgotten at once;
 * one written through another instance is seen within PLAN_CACHE_MS.
 *
 * An entry that names a plan the catalogue does not hold is still the active plan, with the
 * deployment's limits (docs/plans.md, "Entries: who holds which plan").
 */
@Injectable()
export class PlanLimitsCache extends TenantLimits {
  private readonly deployment: LimitValues;
  private readonly entries: TimedCache<PlanEntry[]>;
  private readonly catalogue: TimedCache<Map<string, PlanLimits>>;

  constructor(
    @Inject(PLAN_HOLDERS) private readonly holders: PlanHolders,
    private readonly plans: PlanRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super();
    this.deployment = deploymentLimits(config);
    const ttlMs = config.limits.planCacheMs;
    this.entries = new TimedCache({ ttlMs, max: TENANTS_KEPT });
    this.catalogue = new TimedCache({ ttlMs, max: 1 });
  }

  async of(tenant: Tenant): Promise<ActiveLimits> {
    const entries = await this.entries.get(keyOf(tenant), () => this.holders.entriesOf(tenant));
    const entry = activeEntry(entries, new Date());
    if (!entry) return { plan: null, limits: this.deployment };
    const catalogue = await this.catalogue.get(CATALOGUE, () => this.readCatalogue());
    return {
      plan: { name: entry.planName, since: entry.since, until: entry.until },
      limits: limitsUnder(catalogue.get(entry.planName) ?? {}, this.deployment),
    };
  }

  /** A tenant's entries were written through this instance. */
  entriesChanged(tenant: Tenant): void {
    this.entries.forget(keyOf(tenant));
  }

  /** The catalogue was written through this instance. */
  catalogueChanged(): void {
    this.catalogue.forget();
  }

  private async readCatalogue(): Promise<Map<string, PlanLimits>> {
    return new Map((await this.plans.list()).map((plan) => [plan.name, plan.limits]));
  }
}

function keyOf(tenant: Tenant): string {
  return `${tenant.kind}\u0000${tenant.id}`;
}
