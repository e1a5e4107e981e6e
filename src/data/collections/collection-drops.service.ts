import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../../auth';
import { BackgroundTasks, type BackgroundTask } from '../../common/scheduling/background-tasks';
import { APP_CONFIG, type AppConfig } from '../../config';
import { UniqueClaimRepository } from '../items/unique/unique-claim.repository';
import { ItemPlaceRepository } from '../items/limits/item-place.repository';
import { IndexSlotRepository } from '../indexes/index-slot.repository';
import { SearchBuildRepository } from '../search/search-build.repository';
import { TenantStorage, type NativeCollection } from '../storage/tenant-storage';
import {
  CollectionRegistryRepository,
  type RegisteredCollection,
} from './collection-registry.repository';
import { CollectionDropsRepository } from './collection-drops.repository';

/** Tombstones one sweep looks at: the next sweep takes the rest. */
const SWEEP_BATCH = 200;

/**
 * Dropping collections so that no state is left half-way, also across instances and crashes:
 *
 * 1. a tombstone names the native collection (before anything goes: a crash after it is finished
 *    by the sweep);
 * 2. the registry entry goes, which frees the name and the quota slot (the next write of the name
 *    registers a new entry with a new native collection);
 * 3. the native collection, its unique-value claims, its item places and its index slots go.
 *
 * A write that read the entry before step 2 (in flight, or from another instance's registry
 * cache) can still land in the native collection and create it again. Every instance's sweep
 * therefore drops the native collection of every tombstone again, every LIFECYCLE_POLL_MS, until
 * the tombstone is COLLECTION_DROP_GRACE_MS old; then no request can hold the entry any more, and
 * the tombstone goes after a last drop (a moved source's without one: a later move may have put
 * the collection back there). So at every moment a native collection has a registry
 * entry or a tombstone, and an entry always names a collection that takes writes.
 */
@Injectable()
export class CollectionDropsService {
  private readonly graceMs: number;
  private readonly task: BackgroundTask;

  constructor(
    private readonly tombstones: CollectionDropsRepository,
    private readonly registry: CollectionRegistryRepository,
    private readonly storage: TenantStorage,
    private readonly claims: UniqueClaimRepository,
    private readonly places: ItemPlaceRepository,
    private readonly slots: IndexSlotRepository,
    private readonly searchRuns: SearchBuildRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.graceMs = config.lifecycle.dropGraceMs;
    this.task = tasks.register({
      name: 'collection-drops',
      intervalMs: config.lifecycle.pollMs,
      run: () => this.sweepTombstones(),
    });
  }

  /** Drops the tenant's collection; false when there is none (by the registry, not a cache). */
  async drop(tenant: Tenant, branch: string, name: string): Promise<boolean> {
    const entry = await this.registry.find(tenant, branch, name, { fresh: true });
    return entry !== null && this.dropEntry(tenant, branch, entry);
  }

  /**
   * Drops every collection of a tenant in every branch (an erasure), calling `dropped` after
   * each; how many there were.
   */
  async dropAll(tenant: Tenant, dropped: () => Promise<void> = async () => {}): Promise<number> {
    const entries = await this.registry.listInEveryBranch(tenant);
    for (const entry of entries) {
      await this.dropEntry(tenant, entry.branch, entry);
      await dropped();
    }
    return entries.length;
  }

  /**
   * Removes the source of a moved collection, under a tombstone like a drop's, so that every
   * instance removes it again for COLLECTION_DROP_GRACE_MS. Its registry entry (which names the
   * new location) and its index slots stay.
   */
  async removeMovedSource(source: NativeCollection): Promise<void> {
    await this.tombstones.writeMovedAway(source, new Date());
    await this.removeNative(source, { movedAway: true });
  }

  /** One sweep now (also what every instance runs every LIFECYCLE_POLL_MS). */
  sweep(): Promise<void> {
    return this.task.runNow();
  }

  private async dropEntry(
    tenant: Tenant,
    branch: string,
    entry: RegisteredCollection,
  ): Promise<boolean> {
    await this.tombstones.write(entry.id, entry, new Date());
    const removed = await this.registry.remove(tenant, branch, entry);
    await this.removeNative(entry);
    return removed;
  }

  private async removeNative(
    native: NativeCollection,
    { movedAway = false }: { movedAway?: boolean } = {},
  ): Promise<void> {
    await this.storage.drop(native);
    await this.claims.deleteForCollection(native);
    await this.places.deleteForCollection(native);
    if (!movedAway) {
      await this.slots.deleteForCollection(native.physical);
      // A run still going finds no entry at its next batch and ends.
      await this.searchRuns.deleteForCollection(native.physical);
    }
  }

  private async sweepTombstones(): Promise<void> {
    const tombstones = await this.tombstones.oldest(SWEEP_BATCH);
    for (const tombstone of tombstones) {
      if (this.task.isStopped) return;
      const expired = tombstone.droppedAt.getTime() < Date.now() - this.graceMs;
      // A drop that stopped after its tombstone (a crash) is finished here.
      if (!tombstone.movedAway) await this.registry.removeById(tombstone.id);
      // A moved source is dropped again only within its grace: after it, a later move may have
      // put the collection back in its place (the tenant moved back, a move tried again after
      // one that failed), which a late sweep would drop. A dropped collection's name is its own.
      if (!(tombstone.movedAway && expired)) await this.removeNative(tombstone, tombstone);
      if (expired) await this.tombstones.remove(tombstone.id);
    }
  }
}
