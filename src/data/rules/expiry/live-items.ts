import type { Filter } from 'mongodb';
import { toMongoFilter, type ItemDocument, type ItemMatch } from '../../query/data-query';
import type { ListPlan } from '../../query/list-plan';
import type { NativeCollection } from '../../storage/tenant-storage';
import { liveFilter } from './expiry-time';

/**
 * The filter of a match in a collection: `toMongoFilter`, and — when the collection has an expiry
 * rule — only items that have not expired. Every read and write of items goes through it, so an
 * expired item is gone for requests from the moment it expires, before the sweep deletes it.
 */
export function itemFilter(
  target: NativeCollection,
  match: ItemMatch,
  plan?: ListPlan,
  now = Date.now(),
): Filter<ItemDocument> {
  const filter = toMongoFilter(match, plan);
  const rule = target.rules?.expiry;
  if (!rule) return filter;
  const live = liveFilter(rule, now) as Filter<ItemDocument>;
  return Object.keys(filter).length === 0 ? live : { $and: [filter, live] };
}

/** The collection with its rules left aside: what expiry itself reads, expired items included. */
export function withExpired(target: NativeCollection): NativeCollection {
  const { physical, cluster, database } = target;
  return {
    physical,
    ...(cluster !== undefined ? { cluster } : {}),
    ...(database !== undefined ? { database } : {}),
  };
}
