import { Injectable } from '@nestjs/common';
import type { Collection, Document, Filter, FindCursor } from 'mongodb';
import { DUPLICATE, orDuplicate, type Duplicate } from '../../common/mongo/duplicate';
import { GroupedInserts } from '../../common/mongo/grouped-inserts';
import {
  ownerMatchScope,
  toMongoFilter,
  type ItemMatch,
  type MatchScope,
  type OwnerScope,
} from '../query/data-query';
import { type Condition } from '../query/filter-operators';
import { itemFilter } from '../rules/expiry/live-items';
import { toMongoSort, type ListPlan } from '../query/list-plan';
import { toMongoProjection, type Projection } from '../query/projection';
import { REVISION_FIELD, WORDS_FIELD } from '../query/data.constants';
import { afterWrite, COUNT_WRITE, newRevisionRecord } from './item-revision';
import { type Guarded, type JsonObject, type JsonScalar } from '../../common/json';
import type { KeptTimes } from '../query/data-requests';
import { TenantStorage, type NativeCollection, type StoredItem } from '../storage/tenant-storage';

/**
 * The hidden members a write stores beside the client's fields (search-rule.ts `wordsFor`): the
 * item's word list under a search configuration, nothing otherwise.
 */
export type HiddenMembers = { [WORDS_FIELD]?: string[] };

/**
 * An item as first stored: its fields, its word list (`hidden`, when its collection has a
 * search configuration), its times and a new revision record.
 */
export function newStoredItem(
  id: string,
  item: Guarded<JsonObject>,
  times: KeptTimes,
  hidden: HiddenMembers = {},
): StoredItem {
  const stored = {
    _id: id,
    ...item,
    ...hidden,
    _createdAt: times.createdAt,
    _updatedAt: times.updatedAt,
  };
  return { ...stored, [REVISION_FIELD]: newRevisionRecord() };
}

/**
 * Items of tenant collections, through TenantStorage: callers name a registry entry and pass only
 * guarded documents and server-built conditions; queries from client input carry maxTimeMS.
 */
@Injectable()
export class ItemsRepository {
  private readonly inserts = new GroupedInserts();

  constructor(private readonly storage: TenantStorage) {}

  private collection(target: NativeCollection): Collection<StoredItem> {
    return this.storage.itemsOf(target);
  }

  /** The item count from collection metadata (no scan): for unconfined, unfiltered counts only. */
  async estimatedCount(target: NativeCollection): Promise<number> {
    return (await this.storage.stats(target, false)).count;
  }

  async insert(
    target: NativeCollection,
    id: string,
    item: Guarded<JsonObject>,
    times: KeptTimes,
    hidden: HiddenMembers = {},
  ): Promise<StoredItem | Duplicate> {
    const stored = newStoredItem(id, item, times, hidden);
    const inserted = await this.inserts.insert(this.collection(target), stored);
    return inserted === DUPLICATE ? DUPLICATE : stored;
  }

  /** The id of one item in scope whose field has exactly this value (uniqueField check). */
  async findIdByValue(
    target: NativeCollection,
    scope: OwnerScope | null,
    field: string,
    value: JsonScalar,
  ): Promise<string | null> {
    const match: ItemMatch = {
      scope: ownerMatchScope(scope),
      conditions: [{ kind: 'eq', path: field, anyOf: [value] }],
    };
    const doc = await this.collection(target).findOne(itemFilter(target, match), {
      projection: { _id: 1 },
      maxTimeMS: this.storage.maxTimeMS,
    });
    return doc ? doc._id : null;
  }

  async existsById(target: NativeCollection, id: string): Promise<boolean> {
    const byId: ItemMatch = { scope: null, conditions: [{ kind: 'eq', path: '_id', anyOf: [id] }] };
    const options = { projection: { _id: 1 }, maxTimeMS: this.storage.maxTimeMS };
    return (await this.collection(target).findOne(itemFilter(target, byId), options)) !== null;
  }

  /**
   * The named top-level fields of one item (a uniqueField claim's holder, a list page's edge),
   * or null when none; `scope` confines it (a read: the caller's read rule).
   */
  async findFieldsById(
    target: NativeCollection,
    id: string,
    fields: readonly string[],
    scope: MatchScope | null = null,
  ): Promise<Record<string, unknown> | null> {
    const projection = Object.fromEntries(fields.map((field) => [field, 1]));
    return this.collection(target).findOne(
      toMongoFilter({ scope, conditions: [{ kind: 'eq', path: '_id', anyOf: [id] }] }),
      { projection: { _id: 1, ...projection }, maxTimeMS: this.storage.maxTimeMS },
    );
  }

  /** Up to `limit` matching items, unsorted: the server stops at the first (2 detect ambiguity). */
  async findMatching(
    target: NativeCollection,
    match: ItemMatch,
    limit: number,
    projection: Projection | null = null,
  ): Promise<StoredItem[]> {
    return this.collection(target)
      .find(
        itemFilter(target, match),
        projection ? { projection: toMongoProjection(projection) } : {},
      )
      .limit(limit)
      .maxTimeMS(this.storage.maxTimeMS)
      .toArray();
  }

  /** Ids of up to `limit` matching items (update and delete resolve their single target first). */
  async findMatchingIds(
    target: NativeCollection,
    match: ItemMatch,
    limit: number,
    { inIdOrder = false } = {},
  ): Promise<string[]> {
    const docs = await this.limited(target, match, limit, inIdOrder, { _id: 1 }).toArray();
    return docs.map((d) => d._id);
  }

  /** Up to `limit` matching items in `_id` order, whole (a round of a multi-item update). */
  findInIdOrder(target: NativeCollection, match: ItemMatch, limit: number): Promise<StoredItem[]> {
    return this.limited(target, match, limit, true).toArray();
  }

  private limited(
    target: NativeCollection,
    match: ItemMatch,
    limit: number,
    inIdOrder: boolean,
    projection?: Document,
  ): FindCursor<StoredItem> {
    return this.collection(target)
      .find(itemFilter(target, match), { ...(inIdOrder ? { sort: { _id: 1 } } : {}), projection })
      .limit(limit)
      .maxTimeMS(this.storage.maxTimeMS);
  }

  /** One page of a list; asks for one more than the limit so the caller knows if more follow. */
  async list(
    target: NativeCollection,
    match: ItemMatch,
    plan: ListPlan,
    projection: Projection | null = null,
  ): Promise<StoredItem[]> {
    return this.listCursor(target, match, plan, projection).toArray();
  }

  /** The find of a list page; explain runs the very same one. */
  private listCursor(
    target: NativeCollection,
    match: ItemMatch,
    plan: ListPlan,
    projection: Projection | null,
  ): FindCursor<StoredItem> {
    return this.collection(target)
      .find(
        itemFilter(target, match, plan),
        projection ? { projection: toMongoProjection(projection) } : {},
      )
      .sort(toMongoSort(plan))
      .limit(plan.limit + 1)
      .maxTimeMS(this.storage.maxTimeMS);
  }

  async count(target: NativeCollection, match: ItemMatch): Promise<number> {
    return this.collection(target).countDocuments(itemFilter(target, match), {
      maxTimeMS: this.storage.maxTimeMS,
    });
  }

  /**
   * Sets values on the item with this id while it still matches (with the id: an item that
   * stopped matching is not touched; its revision condition too), counting the write. Null: none.
   * `hidden`: the item's word list after the write, set in the same command.
   */
  async updateById(
    target: NativeCollection,
    id: string,
    match: ItemMatch,
    values: Guarded<JsonObject>,
    now: Date,
    hidden: HiddenMembers = {},
  ): Promise<StoredItem | null | Duplicate> {
    return this.setById(target, id, match, { ...values, ...hidden, _updatedAt: now });
  }

  /**
   * `updateById` answering the item before it too, in the same one command (live queries judge
   * an update by both): the item after is computed from it (a path through an array is read).
   */
  async updateByIdWithPrior(
    target: NativeCollection,
    id: string,
    match: ItemMatch,
    values: Guarded<JsonObject>,
    now: Date,
  ): Promise<{ before: StoredItem; after: StoredItem } | null | Duplicate> {
    const set = { ...values, _updatedAt: now };
    const before = await this.setById(target, id, match, set, 'before');
    if (before === null || before === DUPLICATE) return before;
    const after = afterWrite(before, set) ?? (await this.collection(target).findOne({ _id: id }));
    return after ? { before, after } : null;
  }

  /** `$set` on the item with this id while it still matches, counting the write. */
  private async setById(
    target: NativeCollection,
    id: string,
    match: ItemMatch,
    set: Document,
    returnDocument: 'before' | 'after' = 'after',
  ): Promise<StoredItem | null | Duplicate> {
    return orDuplicate(() =>
      this.collection(target).findOneAndUpdate(
        byIds(target, [id], match),
        { $set: set, ...COUNT_WRITE },
        { returnDocument, maxTimeMS: this.storage.maxTimeMS },
      ),
    );
  }

  async deleteById(target: NativeCollection, id: string, match: ItemMatch): Promise<boolean> {
    const result = await this.collection(target).deleteOne(byIds(target, [id], match), {
      maxTimeMS: this.storage.maxTimeMS,
    });
    return result.deletedCount === 1;
  }

  /** The database's plan for a list's query (`executionStats`): what the query would do. */
  async explainList(
    target: NativeCollection,
    match: ItemMatch,
    plan: ListPlan,
    projection: Projection | null,
  ): Promise<Document> {
    return this.listCursor(target, match, plan, projection).explain('executionStats');
  }

  /** Sets values on every matching item, counting each one's write (multi-item PUT). */
  async updateMatching(
    target: NativeCollection,
    match: ItemMatch,
    values: Guarded<JsonObject>,
    now: Date,
  ): Promise<{ matched: number; modified: number } | Duplicate> {
    return orDuplicate(async () => {
      const result = await this.collection(target).updateMany(
        itemFilter(target, match),
        { $set: { ...values, _updatedAt: now }, ...COUNT_WRITE },
        { maxTimeMS: this.storage.maxTimeMS },
      );
      return { matched: result.matchedCount, modified: result.modifiedCount };
    });
  }

  /** Deletes the items with these ids that still match; how many went. */
  async deleteMatchingIds(
    target: NativeCollection,
    match: ItemMatch,
    ids: string[],
  ): Promise<number> {
    const result = await this.collection(target).deleteMany(byIds(target, ids, match), {
      maxTimeMS: this.storage.maxTimeMS,
    });
    return result.deletedCount;
  }

  /** Which of these ids name stored items. */
  async existingIds(target: NativeCollection, ids: string[]): Promise<Set<string>> {
    const docs = await this.collection(target)
      .find({ _id: { $in: ids } }, { projection: { _id: 1 } })
      .maxTimeMS(this.storage.maxTimeMS)
      .toArray();
    return new Set(docs.map((doc) => doc._id));
  }

  /** Sets one field (a dotted path) to a guarded value (`holder.value`), as `updateById` does. */
  async setFieldById(
    target: NativeCollection,
    id: string,
    match: ItemMatch,
    path: string,
    holder: Guarded<JsonObject>,
    now: Date,
    hidden: HiddenMembers = {},
  ): Promise<StoredItem | null | Duplicate> {
    return this.setById(target, id, match, { [path]: holder.value, ...hidden, _updatedAt: now });
  }
}

/** The filter of the items with these ids that still match. */
function byIds(target: NativeCollection, ids: string[], match: ItemMatch): Filter<StoredItem> {
  const idCondition: Condition = { kind: 'eq', path: '_id', anyOf: ids };
  return itemFilter(target, { ...match, conditions: [idCondition, ...match.conditions] });
}
