import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { CustomerPrincipal } from '../../auth';
import {
  changeScopeOf,
  EventsService,
  priorOf,
  type FeedChange,
  type ChangeScope,
  type PlannedChange,
  type RecordedChange,
} from '../../events';
import { CollectionRegistryRepository } from '../collections/collection-registry.repository';
import { ItemsRepository } from './items.repository';
import { toItemJson, type DataItemDto } from './dto/data-item.dto';
import type { NativeCollection, StoredItem } from '../storage/tenant-storage';
import { APP_CONFIG, type AppConfig } from '../../config';
import { compileLiveFilter } from '../query/live-filter';
import { filterLimits } from '../query/filter-operators';

/** The owner value an item's owner field holds, as the feed's visibility compares it. */
function ownerOf(item: StoredItem | DataItemDto, ownerField: string): string | null {
  const value = (item as Record<string, unknown>)[ownerField];
  return typeof value === 'string' ? value : null;
}

/**
 * An item write under way in the feed (ItemEvents.begin…): its intent is recorded and the gate
 * passed. The caller writes, then settles it once: `commit` with what the write did, `abandon`
 * when the write was not sent, `failed` when it threw (see FeedChange).
 */
export interface ItemChange<R> {
  commit(result: R): Promise<void>;
  abandon(): Promise<void>;
  failed(error: unknown): Promise<void>;
}

/**
 * What an update commits: the JSON of the items it wrote (toItemJson, made once per item by the
 * writer, which answers it too), and the items before when it read them.
 */
export interface UpdatedItems {
  after: readonly DataItemDto[];
  before?: readonly StoredItem[];
}

const UNRECORDED_ITEM_CHANGE: ItemChange<never> = {
  commit: () => Promise.resolve(),
  abandon: () => Promise.resolve(),
  failed: () => Promise.resolve(),
};

function itemChange<R>(change: FeedChange, events: (result: R) => RecordedChange[]): ItemChange<R> {
  return {
    commit: (result) => change.commit(() => events(result)),
    abandon: () => change.abandon(),
    failed: (error) => change.failed(error),
  };
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
   * The events of items written, from their JSON (toItemJson, made once per item by the caller,
   * which answers it too); an update's carry what live queries need of the item before
   * (`before`, by id: its prior, and its owner then when the write changed it).
   */
  private recorded(
    type: 'created' | 'updated',
    collection: string,
    items: readonly DataItemDto[],
    ownerField: string,
    before?: readonly StoredItem[],
  ): RecordedChange[] {
    const earlier = new Map(before?.map((item) => [item._id, item]));
    return items.map((data) => {
      const owner = ownerOf(data, ownerField);
      const was = earlier.get(data._id);
      const formerOwner = was ? ownerOf(was, ownerField) : owner;
      return {
        resource: 'item',
        type,
        collection,
        key: data._id,
        ownerField,
        owner,
        data,
        ...(was ? { prior: priorOf(toItemJson(was), data) } : {}),
        ...(formerOwner !== owner ? { formerOwner } : {}),
      };
    });
  }

  /**
   * Begins an insert of the items `ids` (intent recorded, gate passed): the caller inserts, then
   * commits the JSON of the items it inserted (none: nothing was created).
   */
  async beginCreate(
    principal: CustomerPrincipal,
    collection: string,
    ids: readonly string[],
    ownerField: string,
  ): Promise<ItemChange<readonly DataItemDto[]>> {
    const change = await this.events.begin(
      changeScopeOf(principal),
      this.planned('created', collection, ids, ownerField),
    );
    return itemChange(change, (created) =>
      this.recorded('created', collection, created, ownerField),
    );
  }

  /**
   * Begins an update of the items `ids`: the caller writes, then commits the JSON of the items
   * it updated (`after`) and, when its write read them anyway, the items as they were (`before`); without
   * them the events hold no prior, and live queries judge them by the item after alone.
   */
  async beginUpdate(
    principal: CustomerPrincipal,
    collection: string,
    ids: readonly string[],
    ownerField: string,
  ): Promise<ItemChange<UpdatedItems>> {
    const change = await this.events.begin(
      changeScopeOf(principal),
      this.planned('updated', collection, ids, ownerField),
    );
    return itemChange(change, ({ after, before }) =>
      this.recorded('updated', collection, after, ownerField, before),
    );
  }

  /**
   * Begins a deletion of some of the items `ids` of `target`: the caller deletes, then commits
   * the ids it deleted. They are read first: a sub key sees the deletions of its own items, and
   * a live query judges a deletion by the item as it was.
   */
  beginDelete(
    principal: CustomerPrincipal,
    collection: string,
    target: NativeCollection,
    ids: readonly string[],
    ownerField: string,
  ): Promise<ItemChange<readonly string[]>> {
    return this.beginDeleteIn(changeScopeOf(principal), collection, target, ids, ownerField);
  }

  /** `beginDelete` by another actor than a request's principal (the service's expiry). */
  async beginDeleteIn(
    scope: ChangeScope,
    collection: string,
    target: NativeCollection,
    ids: readonly string[],
    ownerField: string,
  ): Promise<ItemChange<readonly string[]>> {
    if (!this.events.enabled) return UNRECORDED_ITEM_CHANGE;
    const before = await this.items.findMatching(
      target,
      { scope: null, conditions: [{ kind: 'eq', path: '_id', anyOf: [...ids] }] },
      ids.length,
    );
    const found = new Map(before.map((item) => [item._id, item]));
    const change = await this.events.begin(
      scope,
      this.planned('deleted', collection, ids, ownerField),
    );
    return itemChange(change, (gone) =>
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
