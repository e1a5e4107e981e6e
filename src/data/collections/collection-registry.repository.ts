import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type { Tenant } from '../../auth';
import { LookupCache } from '../../common/cache/lookup-cache';
import { DUPLICATE, orDuplicate } from '../../common/mongo/duplicate';
import { claimSlot, firstFreeUnder } from '../../common/mongo/slots';
import { namespaceFilter, namespaceKey, tenantFilter } from '../../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../../config';
import type { TenantLocation } from '../../placement';
import { defaultAccessRule, rulesUpdate, type RulesChange } from '../rules/collection-rules';
import { CollectionRegistryDocument, type CollectionMoving } from './collection-registry.schema';
import { toEntry, type RegisteredCollection } from './registered-collection';

export type { RegisteredCollection } from './registered-collection';

@Injectable()
export class CollectionRegistryRepository implements OnModuleInit {
  /**
   * Entries read lately (REGISTRY_CACHE_MS, REGISTRY_CACHE_SIZE). An entry changes only by going
   * (a drop) or by a change of its rules: the instance that makes the change forgets it at once,
   * every other one within REGISTRY_CACHE_MS — which is why a drop keeps its tombstone longer
   * than that, and why a rule takes effect on other instances that much later.
   */
  private readonly cache: LookupCache<RegisteredCollection>;

  constructor(
    @InjectModel(CollectionRegistryDocument.name)
    private readonly registry: Model<CollectionRegistryDocument>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const { registryCacheMs: ttlMs, registryCacheSize: max } = config.lifecycle;
    this.cache = new LookupCache({ ttlMs, max });
  }

  async onModuleInit(): Promise<void> {
    await this.registry.init();
  }

  private static key(tenant: Tenant, branch: string, name: string): string {
    return `${namespaceKey({ ...tenant, branch })}\u0000${name}`;
  }

  /** The filter of one namespace: the tenant's kind is always part of it. */
  private static scope(tenant: Tenant, branch: string) {
    return namespaceFilter({ ...tenant, branch });
  }

  /**
   * The entry of a name: from this instance's cache, with concurrent lookups of one name sharing
   * one read (LookupCache.load); `fresh` reads the registry, not the cache, and caches what it read.
   * An entry being moved is read afresh every time: its location changes when the move switches
   * it, and its writes may be paused.
   */
  async find(
    tenant: Tenant,
    branch: string,
    name: string,
    { fresh = false } = {},
  ): Promise<RegisteredCollection | null> {
    const key = CollectionRegistryRepository.key(tenant, branch, name);
    const read = () => this.read(tenant, branch, name);
    if (!fresh) {
      const cached = await this.cache.load(key, read);
      if (!cached?.moving) return cached;
    }
    const mark = this.cache.mark();
    const entry = await read();
    if (entry) this.cache.remember(key, entry, mark);
    return entry;
  }

  /**
   * The entry of a name as this instance has it (read when it has none, like `find`), even one
   * being moved: a write's one lookup, which its move gate (CollectionWriteGate) decides on and,
   * for an entry being moved, reads afresh once the write is marked.
   */
  async cached(tenant: Tenant, branch: string, name: string): Promise<RegisteredCollection | null> {
    const key = CollectionRegistryRepository.key(tenant, branch, name);
    return this.cache.load(key, () => this.read(tenant, branch, name));
  }

  private async read(tenant: Tenant, branch: string, name: string) {
    const doc = await this.registry
      .findOne({ ...CollectionRegistryRepository.scope(tenant, branch), name })
      .lean<CollectionRegistryDocument>()
      .exec();
    return doc ? toEntry(doc) : null;
  }

  /**
   * Marks every collection of the tenant (all branches) that is not at `to` as moved by `move`,
   * in phase `copying`; how many it marked. Entries marked by this move already are left as they
   * are.
   */
  async announceMove(tenant: Tenant, move: string, to: TenantLocation & { cluster: string }) {
    const result = await this.registry
      .updateMany(
        {
          ...tenantFilter(tenant),
          moving: { $exists: false },
          $or: [{ cluster: { $ne: to.cluster } }, { database: { $ne: to.database } }],
        },
        {
          $set: { moving: { move, cluster: to.cluster, database: to.database, phase: 'copying' } },
        },
      )
      .exec();
    this.cache.forget(() => true);
    return result.modifiedCount;
  }

  /** The entries a move is moving, in every branch. */
  async movedBy(move: string): Promise<(RegisteredCollection & { branch: string })[]> {
    const docs = await this.registry
      .find({ 'moving.move': move })
      .sort({ _id: 1 })
      .lean<CollectionRegistryDocument[]>()
      .exec();
    return docs.map((doc) => ({ ...toEntry(doc), branch: doc.branch }));
  }

  /** Collections of the tenant that are not on the cluster (or are being moved). */
  async countNotOn(tenant: Tenant, cluster: string): Promise<number> {
    return this.registry
      .countDocuments({
        ...tenantFilter(tenant),
        $or: [{ cluster: { $ne: cluster } }, { moving: { $exists: true } }],
      })
      .exec();
  }

  /** Sets the phase of an entry the move is moving; false when it is not (any more). */
  async setMovePhase(id: string, move: string, phase: CollectionMoving['phase']): Promise<boolean> {
    const result = await this.registry
      .updateOne(
        { _id: new Types.ObjectId(id), 'moving.move': move },
        { $set: { 'moving.phase': phase } },
      )
      .exec();
    this.forgetId(id);
    return result.matchedCount === 1;
  }

  /**
   * Points the entry at its new location and ends its move; false when the entry went (a drop)
   * or another run of the move switched it already.
   */
  async switchLocation(id: string, move: string, to: TenantLocation): Promise<boolean> {
    const result = await this.registry
      .updateOne(
        { _id: new Types.ObjectId(id), 'moving.move': move },
        { $set: { cluster: to.cluster, database: to.database }, $unset: { moving: 1 } },
      )
      .exec();
    this.forgetId(id);
    return result.modifiedCount === 1;
  }

  /** Ends the entry's move where it is (a move that gave up). */
  async endMove(id: string, move: string): Promise<void> {
    await this.registry
      .updateOne({ _id: new Types.ObjectId(id), 'moving.move': move }, { $unset: { moving: 1 } })
      .exec();
    this.forgetId(id);
  }

  /**
   * Sets or removes rules of an entry (RulesChange); false when the entry went (or `where` does
   * not hold). This instance
   * reads the entry afresh next time, so it sees the new rules at once.
   */
  async changeRules(
    entry: RegisteredCollection,
    change: RulesChange,
    /** A further condition on the entry (a compare-and-set): false when it does not hold. */
    where: Record<string, unknown> = {},
  ): Promise<boolean> {
    const result = await this.registry
      .updateOne({ ...where, _id: new Types.ObjectId(entry.id) }, rulesUpdate(change))
      .exec();
    this.forgetId(entry.id);
    return result.matchedCount === 1;
  }

  private forgetId(id: string): void {
    this.cache.forget((entry) => entry.id === id);
  }

  async countOnCluster(cluster: string): Promise<number> {
    return this.registry.countDocuments({ cluster }).exec();
  }

  async countFor(tenant: Tenant, branch: string): Promise<number> {
    return this.registry.countDocuments(CollectionRegistryRepository.scope(tenant, branch)).exec();
  }

  /**
   * The branches in which a tenant has collections, by name ('' first), with how many: a page of
   * `limit` after `after`, or only `only` (a key bound to a branch).
   */
  async branchesOf(
    tenant: Tenant,
    page: { limit: number; after?: string; only?: string },
    /** A database filter on the collections counted (a key limited to collections: its own). */
    names: Record<string, unknown> = {},
  ): Promise<{ branch: string; collections: number }[]> {
    const branch =
      page.only !== undefined
        ? { branch: page.only }
        : page.after !== undefined
          ? { branch: { $gt: page.after } }
          : {};
    const rows = await this.registry
      .aggregate<{ _id: string; collections: number }>([
        { $match: { ...tenantFilter(tenant), ...branch, ...names } },
        { $group: { _id: '$branch', collections: { $sum: 1 } } },
        { $sort: { _id: 1 } },
        { $limit: page.limit },
      ])
      .exec();
    return rows.map((row) => ({ branch: row._id, collections: row.collections }));
  }

  async listFor(tenant: Tenant, branch: string): Promise<RegisteredCollection[]> {
    const docs = await this.registry
      .find(CollectionRegistryRepository.scope(tenant, branch))
      .sort({ name: 1 })
      .lean<CollectionRegistryDocument[]>()
      .exec();
    return docs.map(toEntry);
  }

  /** Every collection of a tenant, in every branch (an erasure drops them all). */
  async listInEveryBranch(tenant: Tenant): Promise<(RegisteredCollection & { branch: string })[]> {
    const docs = await this.registry
      .find(tenantFilter(tenant))
      .lean<CollectionRegistryDocument[]>()
      .exec();
    return docs.map((doc) => ({ ...toEntry(doc), branch: doc.branch }));
  }

  /**
   * Removes an entry (its tombstone is written already) and forgets it here; false when it was
   * gone. Requests that read it before still hold it; the tombstone outlives them.
   */
  async remove(tenant: Tenant, branch: string, entry: RegisteredCollection): Promise<boolean> {
    const result = await this.registry.deleteOne({ _id: new Types.ObjectId(entry.id) }).exec();
    this.cache.forgetKey(CollectionRegistryRepository.key(tenant, branch, entry.name));
    return result.deletedCount === 1;
  }

  /** Removes an entry by id, whoever's it is: a tombstone's reaper finishing a drop. */
  async removeById(id: Types.ObjectId): Promise<void> {
    await this.registry.deleteOne({ _id: id }).exec();
    this.forgetId(id.toHexString());
  }

  /**
   * Registers a collection in the lowest free slot and returns it; null when the namespace has
   * `max` collections. A unique index on the name makes concurrent first writes of one name agree
   * on one entry; a unique index on the slot makes concurrent creates of different names queue
   * for the remaining places (claimSlot), so the quota is never exceeded. A drop gives its slot
   * back, so the first free slot is looked up, not counted; under a lowered `max` a freed slot is
   * not filled again while the namespace is over it (firstFreeUnder). A new entry has the default access
   * rules written out (DEFAULT_ACCESS_RULES).
   */
  async register(
    tenant: Tenant,
    branch: string,
    name: string,
    max: number,
    location: TenantLocation,
  ): Promise<(RegisteredCollection & { created?: true }) | null> {
    const scope = CollectionRegistryRepository.scope(tenant, branch);
    const entry = await claimSlot<RegisteredCollection & { created?: true }>(
      {
        firstFree: async () => {
          const docs = await this.registry
            .find(scope)
            .select({ slot: 1 })
            .lean<{ slot: number }[]>()
            .exec();
          return firstFreeUnder(new Set(docs.map((d) => d.slot)), max);
        },
        take: async (slot) => {
          const _id = new Types.ObjectId();
          const mark = this.cache.mark();
          const created = await orDuplicate(() =>
            this.registry.create({
              _id,
              ...scope,
              name,
              slot,
              physical: `d_${_id.toHexString()}`,
              // Written out, so that every collection carries its access rules explicitly.
              rules: { access: defaultAccessRule() },
              ...(location.cluster !== null
                ? { cluster: location.cluster, database: location.database }
                : {}),
            }),
          );
          if (created === DUPLICATE) {
            // The name was registered concurrently, or the slot was taken: which one is not in
            // the error on every server, so look.
            return (await this.find(tenant, branch, name)) ?? DUPLICATE;
          }
          const registered = toEntry(created.toObject<CollectionRegistryDocument>());
          this.cache.remember(
            CollectionRegistryRepository.key(tenant, branch, name),
            registered,
            mark,
          );
          return { ...registered, created: true };
        },
      },
      max,
    );
    // A concurrent request may have registered this very name in the last place.
    return entry ?? this.find(tenant, branch, name);
  }
}
