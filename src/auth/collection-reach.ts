import { allowsCollection, type CollectionAccess } from './access-grant';
import { CollectionNotAllowedError } from './auth.errors';
import { grantOf, type CustomerPrincipal } from './principal';

/**
 * A key's `collections` (access-grant.ts) wherever a request reaches a collection: one outside
 * them is refused (403 COLLECTION_NOT_ALLOWED) before anything about it is read, so the answer is
 * the same whether it exists or not; lists, exports and feeds leave it out. In memory only: the
 * grant came with the key.
 */

/** Refuses a collection the principal's key does not reach for `need`. */
export function checkCollectionAccess(
  principal: CustomerPrincipal,
  collection: string,
  need: CollectionAccess,
): void {
  if (!allowsCollection(grantOf(principal), collection, need))
    throw new CollectionNotAllowedError(collection, need);
}

/** Whether the principal's key may read a collection, by name; undefined: it reads every one. */
export function readableBy(principal: CustomerPrincipal): ((name: string) => boolean) | undefined {
  const grant = grantOf(principal);
  if (grant.collections === null) return undefined;
  return (name) => allowsCollection(grant, name, 'read');
}

/**
 * What a limited key's `collections` name, for a database filter: exact names, and the stems of
 * its `stem*` patterns; null: every collection.
 */
export function collectionPatternsOf(
  principal: CustomerPrincipal,
): { names: string[]; stems: string[] } | null {
  const { collections } = grantOf(principal);
  if (collections === null) return null;
  const names: string[] = [];
  const stems: string[] = [];
  for (const pattern of Object.keys(collections))
    if (pattern.endsWith('*')) stems.push(pattern.slice(0, -1));
    else names.push(pattern);
  return { names, stems };
}

/** A database filter on `field` that holds the collection names `patterns` name. */
export function collectionNameFilter(
  field: string,
  patterns: { names: string[]; stems: string[] },
): { $or: Record<string, unknown>[] } {
  return {
    $or: [
      { [field]: { $in: patterns.names } },
      ...patterns.stems.map((stem) => ({ [field]: { $regex: `^${escapeRegExp(stem)}` } })),
    ],
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The entries (by `name`) of the collections the principal's key may read. */
export function readableCollections<T extends { name: string }>(
  principal: CustomerPrincipal,
  entries: readonly T[],
): T[] {
  const readable = readableBy(principal);
  return readable ? entries.filter((entry) => readable(entry.name)) : [...entries];
}
