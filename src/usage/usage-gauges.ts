import type { Tenant } from '../common/tenancy/namespace';

/** What is stored, measured once per tenant and UTC day by the daily snapshot (docs/usage.md). */
export const USAGE_GAUGES = ['itemsStored', 'fileBytesStored'] as const;
export type UsageGauge = (typeof USAGE_GAUGES)[number];

export type GaugeValues = Record<UsageGauge, number>;

/** A tenant's gauges on a day, and when they were measured (the latest of the two). */
export interface StoredGauges extends GaugeValues {
  measuredAt: Date;
}

/**
 * Where the snapshot reads what a tenant stores: a port, answered by the modules that own
 * tenants, collections and files (bound by the composition root), so that usage depends on none.
 */
export interface UsageGaugeSource {
  /** Every tenant (user and team) that exists now, in pages the reader takes as it goes. */
  tenants(): AsyncIterable<Tenant>;
  /** What the tenant stores now: its items in every collection and branch, its file bytes. */
  measure(tenant: Tenant): Promise<GaugeValues>;
  /**
   * Whether the tenant exists and no erasure of it has started: asked before a tenant is
   * measured and again before its gauges are written, so that none are written of a tenant
   * whose erasure had started before it was measured.
   */
  present(tenant: Tenant): Promise<boolean>;
}

export const USAGE_GAUGE_SOURCE = Symbol('USAGE_GAUGE_SOURCE');
