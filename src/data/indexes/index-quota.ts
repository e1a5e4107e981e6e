import { Injectable } from '@nestjs/common';
import type { Tenant } from '../../common/tenancy/namespace';
import { limitRefusal, TenantLimits } from '../../plans';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import { IndexQuotaExceededError } from '../data.errors';
import type { IndexInfo } from '../storage/tenant-storage';
import { IndexSlotRepository } from './index-slot.repository';

/**
 * The index limit of a tenant's collections (`indexesPerCollection`, read through TenantLimits
 * when an index is about to be built): a place is claimed among the collection's index slots
 * below it, or the build is refused before anything is written. Index creation and the search
 * configuration's word index claim through here alike.
 */
@Injectable()
export class IndexQuota {
  constructor(
    private readonly slots: IndexSlotRepository,
    private readonly limits: TenantLimits,
  ) {}

  /**
   * Claims a slot for index `name` of `entry`, whose indexes are `existing` as listed now:
   * 'claimed' (this request holds a new slot: build, or release on failure) or 'held' (a
   * concurrent request creating the same index holds it). At the limit: PLAN_LIMIT_EXCEEDED
   * under a plan, INDEX_QUOTA_EXCEEDED without one.
   */
  async claim(
    tenant: Tenant,
    entry: RegisteredCollection,
    name: string,
    existing: readonly IndexInfo[],
  ): Promise<'claimed' | 'held'> {
    const active = await this.limits.of(tenant);
    const max = active.limits.indexesPerCollection ?? Infinity;
    const natives = existing.map((i) => i.name).filter((n) => n !== '_id_');
    const claim = await this.slots.claim(entry.physical, name, max, natives);
    if (claim !== 'full') return claim;
    throw limitRefusal(
      active,
      { limit: 'indexesPerCollection', max, usage: await this.slots.heldIn(entry.physical) },
      (members) => new IndexQuotaExceededError(members),
    );
  }

  /** Gives back the slot of an index that was not built, or was dropped. */
  release(entry: RegisteredCollection, name: string): Promise<void> {
    return this.slots.release(entry.physical, name);
  }
}
