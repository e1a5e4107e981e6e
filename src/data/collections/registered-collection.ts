import type { CollectionRules } from '../rules/collection-rules';
import type { NativeCollection } from '../storage/tenant-storage';
import type { CollectionMoving, CollectionRegistryDocument } from './collection-registry.schema';

/** A registry entry as the service uses it: a tenant's collection, where it lives, its rules. */
export interface RegisteredCollection extends NativeCollection {
  /** The registry entry's id; the native collection is `d_<id>`. */
  id: string;
  name: string;
  createdAt: Date;
  /** Present while a tenant move copies the collection. */
  moving?: CollectionMoving;
  /** The collection's schema and expiry; `{}` when it has none. */
  rules: CollectionRules;
}

/** The entry of a registry document read lean. */
export function toEntry(doc: CollectionRegistryDocument): RegisteredCollection {
  return {
    id: doc._id.toHexString(),
    name: doc.name,
    physical: doc.physical,
    ...(doc.cluster !== undefined ? { cluster: doc.cluster } : {}),
    ...(doc.database !== undefined ? { database: doc.database } : {}),
    createdAt: doc.createdAt,
    ...(doc.moving ? { moving: doc.moving } : {}),
    rules: doc.rules ?? {},
  };
}
