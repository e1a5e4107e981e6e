import { Injectable } from '@nestjs/common';
import type { FindCursor } from 'mongodb';
import { orDuplicate, type Duplicate } from '../../common/mongo/duplicate';
import { insertInOrder, type InsertedInOrder } from '../../common/mongo/ordered-insert';
import {
  CREATION_TOKEN,
  itemETag,
  itemRevision,
  newRevisionRecord,
  revisionCondition,
  tagOf,
} from '../items/item-revision';
import type { KeptTimes } from '../query/data-requests';
import type { MatchScope } from '../query/data-query';
import { type Condition } from '../query/filter-operators';
import { REVISION_FIELD } from '../query/data.constants';
import { itemFilter } from '../rules/expiry/live-items';
import type { HiddenMembers } from '../items/items.repository';
import { type Guarded, type JsonObject } from '../../common/json';
import { TenantStorage, type NativeCollection, type StoredItem } from '../storage/tenant-storage';

/** The item reads and writes of exports and imports that no other route makes. */
@Injectable()
export class TransferItemsRepository {
  constructor(private readonly storage: TenantStorage) {}

  /**
   * Replaces the item with this id while it is still at the revision read (`current`): its
   * fields become `item`'s (with `hidden`, its word list under a search configuration), its times
   * `times`, and its revision counts the write. Null when it changed or went since it was read.
   */
  async replaceAtRevision(
    target: NativeCollection,
    current: StoredItem,
    scope: MatchScope | null,
    item: Guarded<JsonObject>,
    times: KeptTimes,
    hidden: HiddenMembers = {},
  ): Promise<StoredItem | null | Duplicate> {
    const { identity, revision } = itemRevision(current);
    // An item that expired since it was read is not replaced: its _id goes to a create.
    const filter = itemFilter(target, {
      scope,
      conditions: [{ kind: 'eq', path: '_id', anyOf: [current._id] }],
      revision: revisionCondition(tagOf(itemETag(current))),
    });
    const replacement = {
      ...item,
      ...hidden,
      _createdAt: times.createdAt,
      _updatedAt: times.updatedAt,
      // A legacy item (no record) gets one: its identity changes with its first write.
      [REVISION_FIELD]: {
        c: CREATION_TOKEN.test(identity) ? identity : newRevisionRecord().c,
        n: revision + 1,
      },
    };
    return orDuplicate(() =>
      this.storage.itemsOf(target).findOneAndReplace(filter, replacement, {
        returnDocument: 'after',
        maxTimeMS: this.storage.maxTimeMS,
      }),
    );
  }

  /**
   * Inserts items in their order, in one command, until a unique index refuses one: how many
   * went in (the ones from the refused one on were not written) and whether one was refused.
   */
  insertInOrder(target: NativeCollection, items: readonly StoredItem[]): Promise<InsertedInOrder> {
    return insertInOrder(this.storage.itemsOf(target), items);
  }

  /**
   * The items in scope in `_id` order, after `afterId` if given, read batch by batch as the
   * caller iterates (an export). No time limit: MongoDB counts maxTimeMS over the whole cursor,
   * which a long export outlives; a dead or frozen database still ends it (the driver's bounds).
   */
  inIdOrder(
    target: NativeCollection,
    scope: MatchScope | null,
    afterId: string | null,
    batchSize: number,
  ): FindCursor<StoredItem> {
    const conditions: Condition[] =
      afterId === null ? [] : [{ kind: 'range', path: '_id', op: 'gt', value: afterId }];
    return this.storage
      .itemsOf(target)
      .find(itemFilter(target, { scope, conditions }))
      .sort({ _id: 1 })
      .batchSize(batchSize);
  }
}
