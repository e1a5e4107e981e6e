import { Injectable } from '@nestjs/common';
import {
  checkCollectionAccess,
  collectionNameFilter,
  collectionPatternsOf,
  readableBy,
  readableCollections,
  type CustomerPrincipal,
  type Tenant,
  tenantOf,
} from '../../auth';
import { ForbiddenError, ValidationFailedError, type DomainError } from '../../common/errors';
import type { IfMatch } from '../../common/http/etag';
import { TenantPlacements } from '../../placement';
import { limitRefusal, TenantLimits } from '../../plans';
import {
  CollectionRegistryRepository,
  type RegisteredCollection,
} from './collection-registry.repository';
import { CollectionDropsService } from './collection-drops.service';
import { CollectionWriteGate } from './collection-write.gate';
import { ItemEvents } from '../items/item-events';
import { COLLECTION_NAME_PATTERN } from '../query/data.constants';
import { TenantStorage, type IndexInfo } from '../storage/tenant-storage';
import type { RulesChange } from '../rules/collection-rules';
import {
  CollectionNotFoundError,
  CollectionQuotaExceededError,
  InvalidCollectionNameError,
} from '../data.errors';

/** Collections counted against the tenant's `collections` limit (null: unlimited). */
export interface CollectionQuota {
  used: number;
  limit: number | null;
}

export interface CollectionSummary {
  name: string;
  indexes: IndexInfo[];
}

/**
 * The caller's collections: names, the registry that maps them to physical collections, and the
 * collection quota. Every lookup is scoped by the caller's (tenant kind, id) and branch.
 */
@Injectable()
export class CollectionsService {
  constructor(
    private readonly registry: CollectionRegistryRepository,
    private readonly storage: TenantStorage,
    private readonly drops: CollectionDropsService,
    private readonly events: ItemEvents,
    private readonly placements: TenantPlacements,
    private readonly gate: CollectionWriteGate,
    private readonly limits: TenantLimits,
  ) {}

  /** Collection names are checked once, where they enter: CollectionNamePipe on `{collection}`. */
  static checkName(name: string): void {
    if (!COLLECTION_NAME_PATTERN.test(name)) throw new InvalidCollectionNameError();
  }

  /**
   * The caller's collections in the request branch, sorted by name, with their indexes: those
   * its key may read (a key limited to collections sees no other's name).
   */
  async list(principal: CustomerPrincipal): Promise<CollectionSummary[]> {
    const entries = readableCollections(principal, await this.registered(principal));
    return Promise.all(
      entries.map(async (entry) => ({
        name: entry.name,
        indexes: await this.storage.listIndexes(entry),
      })),
    );
  }

  /** The registry entries of the caller's namespace in the request branch. */
  registered(principal: CustomerPrincipal): Promise<RegisteredCollection[]> {
    return this.registry.listFor(tenantOf(principal), principal.branch);
  }

  /** The collection quota of the caller's namespace in the request branch. */
  quota(principal: CustomerPrincipal): Promise<CollectionQuota> {
    return this.quotaOf(tenantOf(principal), principal.branch);
  }

  /**
   * The quota as the caller's key may see it: a key limited to collections counts only those
   * (the others' number would tell of collections it does not reach).
   */
  async visibleQuota(principal: CustomerPrincipal): Promise<CollectionQuota> {
    if (!readableBy(principal)) return this.quota(principal);
    const used = readableCollections(principal, await this.registered(principal)).length;
    return { used, limit: await this.limitOf(tenantOf(principal)) };
  }

  /**
   * The branches in which the caller's namespace has collections; a key bound to a branch sees
   * only that one, a key limited to collections counts only those. At most `limit`, after `after`.
   */
  branches(principal: CustomerPrincipal, page: { limit: number; after?: string }) {
    const patterns = collectionPatternsOf(principal);
    return this.registry.branchesOf(
      tenantOf(principal),
      { ...page, ...(principal.boundBranch !== null ? { only: principal.boundBranch } : {}) },
      patterns ? collectionNameFilter('name', patterns) : {},
    );
  }

  /** Collections registered on a cluster of DATA_CLUSTERS (operator reads). */
  countOnCluster(cluster: string): Promise<number> {
    return this.registry.countOnCluster(cluster);
  }

  /**
   * The items a tenant stores in all its collections and branches (the daily usage snapshot):
   * one count per collection, as stored — items expired but not yet swept included. FerretDB
   * answers a count by reading every item, so this is for work done once a day, not per request.
   */
  async storedItems(tenant: Tenant): Promise<number> {
    let items = 0;
    for (const entry of await this.registry.listInEveryBranch(tenant))
      items += await this.storage.itemsOf(entry).countDocuments({});
    return items;
  }

  /** The collection quota of a namespace in a branch (operator reads). */
  async quotaOf(tenant: Tenant, branch: string): Promise<CollectionQuota> {
    const [used, limit] = await Promise.all([
      this.registry.countFor(tenant, branch),
      this.limitOf(tenant),
    ]);
    return { used, limit };
  }

  /**
   * The refusal of a collection more when `usage` are counted: PLAN_LIMIT_EXCEEDED under a plan,
   * COLLECTION_QUOTA_EXCEEDED without one (an import's dry run counts those it would make).
   */
  async quotaExceeded(principal: CustomerPrincipal, usage: number): Promise<DomainError> {
    const active = await this.limits.of(tenantOf(principal));
    const max = active.limits.collections ?? Infinity;
    return limitRefusal(
      active,
      { limit: 'collections', max, usage },
      (members) => new CollectionQuotaExceededError(members),
    );
  }

  private async limitOf(tenant: Tenant): Promise<number | null> {
    return (await this.limits.of(tenant)).limits.collections;
  }

  /**
   * The caller's collection, or null when it does not exist (reads never create one). A
   * collection the key does not reach is refused before it is looked up (as by `write`).
   */
  async find(principal: CustomerPrincipal, name: string): Promise<RegisteredCollection | null> {
    checkCollectionAccess(principal, name, 'read');
    return this.registry.find(tenantOf(principal), principal.branch, name);
  }

  /**
   * A write unit's collection: `write` runs with the caller's collection (null: there is none),
   * its registry entry read once and passed through the move gate (CollectionWriteGate) once.
   */
  async write<T>(
    principal: CustomerPrincipal,
    name: string,
    write: (entry: RegisteredCollection | null) => Promise<T>,
  ): Promise<T> {
    checkCollectionAccess(principal, name, 'write');
    return this.gate.write(tenantOf(principal), principal.branch, name, write);
  }

  /** `write`, the collection registered first (within the quota) when there is none. */
  writeCreating<T>(
    principal: CustomerPrincipal,
    name: string,
    write: (entry: RegisteredCollection) => Promise<T>,
  ): Promise<T> {
    return this.write(principal, name, async (found) =>
      write(found ?? (await this.register(principal, name))),
    );
  }

  /**
   * The caller's collection, created (registered) within the quota when there is none: for what
   * writes no item, index or rule of it (an import's manifest), so passes no move gate.
   */
  async findOrCreate(principal: CustomerPrincipal, name: string): Promise<RegisteredCollection> {
    checkCollectionAccess(principal, name, 'write');
    return (await this.find(principal, name)) ?? this.register(principal, name);
  }

  /**
   * Registers the caller's collection within the tenant's `collections` limit, read as it is now
   * (TenantLimits), with its `created` event; the entry of a concurrent registration of the name
   * when there was one. A refusal registers nothing.
   */
  async register(principal: CustomerPrincipal, name: string): Promise<RegisteredCollection> {
    const tenant = tenantOf(principal);
    const max = (await this.limitOf(tenant)) ?? Infinity;
    return this.events.collectionCreated(principal, name, async () => {
      const registered = await this.registry.register(
        tenant,
        principal.branch,
        name,
        max,
        await this.placements.locate(tenant),
      );
      if (!registered)
        throw await this.quotaExceeded(
          principal,
          await this.registry.countFor(tenant, principal.branch),
        );
      return registered;
    });
  }

  /**
   * Sets or removes rules of the caller's collection (RulesChange), as read afresh, with the
   * collection's `updated` event; false when there is no such collection (or `where` does not
   * hold: then no event). This instance
   * enforces the change at once, every other one within REGISTRY_CACHE_MS.
   */
  async changeRules(
    principal: CustomerPrincipal,
    name: string,
    change: RulesChange,
    /** A condition on the entry that the change is made with (compare-and-set); false without it. */
    where: Record<string, unknown> = {},
  ): Promise<boolean> {
    checkCollectionAccess(principal, name, 'write');
    return this.events.collectionUpdated(principal, name, async () => {
      const tenant = tenantOf(principal);
      const entry = await this.registry.find(tenant, principal.branch, name, { fresh: true });
      return entry !== null && (await this.registry.changeRules(entry, change, where));
    });
  }

  /**
   * Drops the caller's collection: its items, indexes and registry entry; its quota slot is free
   * at once (CollectionDropsService says how a racing write is handled). 404 when there is none.
   * Root and team keys only; If-Match names one item's representation, which a drop has not.
   */
  async drop(principal: CustomerPrincipal, name: string, ifMatch: IfMatch): Promise<void> {
    if (principal.kind === 'sub')
      throw new ForbiddenError('A sub key may not drop a collection; root and team keys may.');
    if (ifMatch.kind !== 'absent')
      throw new ValidationFailedError([
        { field: 'If-Match', message: 'goes with a single-item write, not with a drop' },
      ]);
    const dropped = await this.write(principal, name, () =>
      this.events.collectionDropped(principal, name, () =>
        this.drops.drop(tenantOf(principal), principal.branch, name),
      ),
    );
    if (!dropped) throw new CollectionNotFoundError(name);
  }
}
