import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { CustomerPrincipal } from '../../auth';
import { DUPLICATE, type Duplicate } from '../../common/mongo/duplicate';
import {
  changeScopeOf,
  EventsService,
  priorOf,
  type ChangeScope,
  type PlannedChange,
  type RecordedChange,
} from '../../events';
import { CollectionRegistryRepository } from '../collections/collection-registry.repository';
import { ItemsRepository } from './items.repository';
import { toItemJson } from './dto/data-item.dto';
import type { NativeCollection, StoredItem } from '../storage/tenant-storage';
import { APP_CONFIG, type AppConfig } from '../../config';
import { compileLiveFilter } from '../query/live-filter';
import { filterLimits } from '../query/filter-operators';

/** The owner value an item's owner field holds, as the feed's visibility compares it. */
function ownerOf(item: StoredItem, ownerField: string): string | null {
  const value = item[ownerField] as unknown;
  return typeof value === 'string' ? value : null;
}

/**
 * The change feed's view of data: the events of item writes and of collections created and
 * dropped, and the lookups the feed's reconciler uses to see what a write that died left.
 */
@Injectable()
export class ItemEvents implements OnModuleInit {
  constructor(
    private readonly events: EventsService,
    private readonly registry: CollectionRegistryRepository,
    private readonly items: ItemsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const limits = filterLimits(this.config.limits);
    this.events.registerLiveFilters((params) => compileLiveFilter(params, limits));
    this.events.registerLookup('item', async ({ tenant, branch }, change) => {
      if (change.collection === undefined) return null;
      const entry = await this.registry.find(tenant, branch, change.collection, { fresh: true });
      if (!entry) return null;
      const [item] = await this.items.findMatching(
        entry,
        { scope: null, conditions: [{ kind: 'eq', path: '_id', anyOf: [change.key] }] },
        1,
      );
      if (!item) return null;
      return { owner: ownerOf(item, change.ownerField ?? 'userId'), data: toItemJson(item) };
    });
    this.events.registerLookup('collection', async ({ tenant, branch }, change) => {
      const entry = await this.registry.find(tenant, branch, change.key, { fresh: true });
      return entry ? { owner: null, data: { name: entry.name } } : null;
    });
  }

  get enabled(): boolean {
    return this.events.enabled;
  }

  /** The newest event of the principal's namespace (null: no feed), for a list's Feed-Position. */
  async feedPosition(principal: CustomerPrincipal): Promise<number | null> {
    if (!this.events.enabled) return null;
    const { tenant, branch } = changeScopeOf(principal);
    return this.events.latest(tenant, branch);
  }

  private planned(
    type: PlannedChange['type'],
    collection: string,
    ids: readonly string[],
    ownerField: string,
  ): PlannedChange[] {
    return ids.map((key) => ({ resource: 'item', type, collection, key, ownerField }));
  }

  /**
   * The events of items written; an update's carry what live queries need of the item before
   * (`before`, by id: its prior, and its owner then when the write changed it).
   */
  private recorded(
    type: 'created' | 'updated',
    collection: string,
    items: readonly StoredItem[],
    ownerField: string,
    before?: readonly StoredItem[],
  ): RecordedChange[] {
    const earlier = new Map(before?.map((item) => [item._id, item]));
    return items.map((item) => {
      const data = toItemJson(item);
      const owner = ownerOf(item, ownerField);
      const was = earlier.get(item._id);
      const formerOwner = was ? ownerOf(was, ownerField) : owner;
      return {
        resource: 'item',
        type,
        collection,
        key: item._id,
        ownerField,
        owner,
        data,
        ...(was ? { prior: priorOf(toItemJson(was), data) } : {}),
        ...(formerOwner !== owner ? { formerOwner } : {}),
      };
    });
  }

  /** An insert of the item `id` (DUPLICATE: nothing was created). */
  created(
    principal: CustomerPrincipal,
    collection: string,
    id: string,
    ownerField: string,
    write: () => Promise<StoredItem | Duplicate>,
  ): Promise<StoredItem | Duplicate> {
    return this.events.record(
      changeScopeOf(principal),
      this.planned('created', collection, [id], ownerField),
      write,
      (stored) =>
        stored === DUPLICATE ? [] : this.recorded('created', collection, [stored], ownerField),
    );
  }

  /** An insert of the items `ids` at once (an import's run of lines) answering those it wrote. */
  createdAll(
    principal: CustomerPrincipal,
    collection: string,
    ids: readonly string[],
    ownerField: string,
    write: () => Promise<StoredItem[]>,
  ): Promise<StoredItem[]> {
    return this.events.record(
      changeScopeOf(principal),
      this.planned('created', collection, ids, ownerField),
      write,
      (stored) => this.recorded('created', collection, stored, ownerField),
    );
  }

  /**
   * A write that updates the items `ids` and answers those it updated. `before` answers, once
   * the write is done, the items as they were (read by the write anyway); without it the
   * events hold no prior, and live queries judge them by the item after alone.
   */
  updated<T extends StoredItem | StoredItem[]>(
    principal: CustomerPrincipal,
    collection: string,
    ids: readonly string[],
    ownerField: string,
    write: () => Promise<T>,
    before?: () => readonly StoredItem[],
  ): Promise<T> {
    return this.events.record(
      changeScopeOf(principal),
      this.planned('updated', collection, ids, ownerField),
      write,
      (result) =>
        this.recorded(
          'updated',
          collection,
          Array.isArray(result) ? result : [result],
          ownerField,
          before?.(),
        ),
    );
  }

  /**
   * A write that deletes some of the items `ids` of `target` and answers which it deleted.
   * They are read first: a sub key sees the deletions of its own items, and a live query
   * judges a deletion by the item as it was.
   */
  deleted(
    principal: CustomerPrincipal,
    collection: string,
    target: NativeCollection,
    ids: readonly string[],
    ownerField: string,
    write: () => Promise<readonly string[]>,
  ): Promise<readonly string[]> {
    return this.deletedIn(changeScopeOf(principal), collection, target, ids, ownerField, write);
  }

  /** `deleted` by another actor than a request's principal (the service's expiry). */
  async deletedIn(
    scope: ChangeScope,
    collection: string,
    target: NativeCollection,
    ids: readonly string[],
    ownerField: string,
    write: () => Promise<readonly string[]>,
  ): Promise<readonly string[]> {
    if (!this.events.enabled) return write();
    const before = await this.items.findMatching(
      target,
      { scope: null, conditions: [{ kind: 'eq', path: '_id', anyOf: [...ids] }] },
      ids.length,
    );
    const found = new Map(before.map((item) => [item._id, item]));
    return this.events.record(
      scope,
      this.planned('deleted', collection, ids, ownerField),
      write,
      (gone) =>
        gone.map((key) => {
          const item = found.get(key);
          return {
            resource: 'item',
            type: 'deleted',
            collection,
            key,
            ownerField,
            owner: item ? ownerOf(item, ownerField) : null,
            data: null,
            // What a live query judges the deletion by: the item as it was.
            ...(item ? { prior: priorOf(toItemJson(item), null) } : {}),
          };
        }),
    );
  }

  /** A registration of the collection `name`; `created` says whether this request made it. */
  collectionCreated<T extends { created?: boolean }>(
    principal: CustomerPrincipal,
    name: string,
    write: () => Promise<T>,
  ): Promise<T> {
    return this.events.record(
      changeScopeOf(principal),
      [{ resource: 'collection', type: 'created', collection: name, key: name }],
      write,
      (entry) =>
        entry.created === true
          ? [
              {
                resource: 'collection',
                type: 'created',
                collection: name,
                key: name,
                owner: null,
                data: { name },
              },
            ]
          : [],
    );
  }

  /**
   * A change of the collection's rules (its schema, its expiry); the write answers whether the
   * collection was still there to change.
   */
  collectionUpdated(
    principal: CustomerPrincipal,
    name: string,
    write: () => Promise<boolean>,
  ): Promise<boolean> {
    return this.collectionChange(principal, 'updated', name, { name }, write);
  }

  /** A drop of the collection `name`; the write answers whether there was one. */
  collectionDropped(
    principal: CustomerPrincipal,
    name: string,
    write: () => Promise<boolean>,
  ): Promise<boolean> {
    return this.collectionChange(principal, 'deleted', name, null, write);
  }

  /** A write of the collection `name` that answers whether it made the change (its one event). */
  private collectionChange(
    principal: CustomerPrincipal,
    type: 'updated' | 'deleted',
    name: string,
    data: Record<string, unknown> | null,
    write: () => Promise<boolean>,
  ): Promise<boolean> {
    const planned = { resource: 'collection', type, collection: name, key: name } as const;
    return this.events.record(changeScopeOf(principal), [planned], write, (changed) =>
      changed ? [{ ...planned, owner: null, data }] : [],
    );
  }
}
