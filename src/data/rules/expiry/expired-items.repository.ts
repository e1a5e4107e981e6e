import { Injectable } from '@nestjs/common';
import type { Filter } from 'mongodb';
import { toMongoFilter, type ItemMatch } from '../../query/data-query';
import {
  TenantStorage,
  type NativeCollection,
  type StoredItem,
} from '../../storage/tenant-storage';
import type { ExpiryRule } from '../collection-rules';
import { expiredFilter } from './expiry-time';

/**
 * The reads and deletes of expired items, which every other item query leaves out: callers pass
 * the stored collection (`withExpired`) and the rule.
 */
@Injectable()
export class ExpiredItemsRepository {
  constructor(private readonly storage: TenantStorage) {}

  /**
   * Ids of up to `limit` items that match and have expired at `now`. Unsorted, so that MongoDB
   * may serve a `_createdAt`/`_updatedAt` rule from an index on that field.
   */
  async findIds(
    target: NativeCollection,
    rule: ExpiryRule,
    match: ItemMatch,
    limit: number,
    now: number,
  ): Promise<string[]> {
    const filter = { $and: [toMongoFilter(match), expiredFilter(rule, now)] } as Filter<StoredItem>;
    const docs = await this.storage
      .itemsOf(target)
      .find(filter, { projection: { _id: 1 } })
      .limit(limit)
      .maxTimeMS(this.storage.maxTimeMS)
      .toArray();
    return docs.map((doc) => doc._id);
  }

  /**
   * Deletes the item `id` while it is expired; whether this call deleted it. Only one of any
   * number of concurrent deletes of one `_id` is told it did (the database's deletedCount, on
   * MongoDB and FerretDB alike): that one records the expiry.
   */
  async deleteIfExpired(
    target: NativeCollection,
    rule: ExpiryRule,
    id: string,
    now: number,
  ): Promise<boolean> {
    const filter = { $and: [{ _id: id }, expiredFilter(rule, now)] } as Filter<StoredItem>;
    const result = await this.storage
      .itemsOf(target)
      .deleteOne(filter, { maxTimeMS: this.storage.maxTimeMS });
    return result.deletedCount === 1;
  }
}
