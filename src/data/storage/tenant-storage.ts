import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { Collection, Db, Document } from 'mongodb';
import { isIndexConflict, isNamespaceNotFound } from '../../common/errors';
import { DUPLICATE, type Duplicate } from '../../common/mongo/duplicate';
import { isUniqueViolation } from '../../common/errors/mongo-errors';
import { APP_CONFIG, type AppConfig } from '../../config';
import { DataClusters } from '../../placement';
import { REVISION_FIELD } from '../query/data.constants';
import type { CollectionRules } from '../rules/collection-rules';

/**
 * What names a tenant's native collection: a registry entry (or a tombstone, which keeps the
 * entry's native name). Only this file turns it into a driver collection, so where tenant data
 * lives (which database, which cluster) is decided here alone.
 */
export interface NativeCollection {
  /** `d_<registry id>`, made by the server. */
  readonly physical: string;
  /**
   * The cluster and database it lives in (its tenant's placement when it was registered); both
   * absent: the main database, where collections registered before placements stay.
   */
  readonly cluster?: string;
  readonly database?: string;
  /** The collection's rules when this is its registry entry: reads leave expired items out. */
  readonly rules?: CollectionRules;
}

/** An item as stored: string `_id`, BSON dates, the revision record (items/item-revision.ts). */
export interface StoredItem extends Document {
  _id: string;
  _createdAt: Date;
  _updatedAt: Date;
  [REVISION_FIELD]?: { c?: string; n?: number };
}

export interface IndexInfo {
  name: string;
  fields: Record<string, 1 | -1>;
  unique: boolean;
}

/**
 * DUPLICATE: existing items violate the unique index; 'conflict': an index with this name or
 * these keys and another definition exists already.
 */
export type CreateIndexResult = 'created' | Duplicate | 'conflict';

/**
 * The one seam between the registry and the native tenant collections: it resolves an entry to
 * its items collection (`itemsOf`, the one way to reach it), and drops, indexes and measures
 * native collections. Native collections are created by their first insert.
 */
@Injectable()
export class TenantStorage {
  /**
   * The time limit of a query that client input shapes (QUERY_TIMEOUT_MS): every reader of
   * tenant items sends it with such a query.
   */
  readonly maxTimeMS: number;
  /**
   * The driver's handles of the native collections in use, as many as the registry entries an
   * instance keeps (REGISTRY_CACHE_SIZE): a handle costs an options resolution to make. Each
   * remembers the database handle it came from, and is made again if that one changed.
   */
  private readonly handles: LRUCache<string, { db: Db; collection: Collection<StoredItem> }>;

  constructor(
    private readonly clusters: DataClusters,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxTimeMS = config.database.queryTimeoutMs;
    this.handles = new LRUCache({ max: config.lifecycle.registryCacheSize });
  }

  /** The entry's items: its native collection, in the database its placement names. */
  itemsOf(entry: NativeCollection): Collection<StoredItem> {
    const db = this.databaseOf(entry);
    const key = `${entry.cluster ?? ''}\0${entry.database ?? ''}\0${entry.physical}`;
    const cached = this.handles.get(key);
    if (cached?.db === db) return cached.collection;
    const collection = db.collection<StoredItem>(entry.physical);
    this.handles.set(key, { db, collection });
    return collection;
  }

  /**
   * A collection the service keeps beside tenant collections, in the database that holds
   * `entry` (the tenant's; the main one for collections registered before placements).
   */
  companionOf<T extends Document>(entry: NativeCollection, name: string): Collection<T> {
    return this.databaseOf(entry).collection<T>(name);
  }

  /** Whether two locations name one native collection (two cluster names for one deployment). */
  sameNamespace(a: NativeCollection, b: NativeCollection): boolean {
    return (
      a.physical === b.physical &&
      a.database === b.database &&
      this.clusters.sameDeployment(a.cluster ?? null, b.cluster ?? null)
    );
  }

  private databaseOf(entry: NativeCollection): Db {
    return entry.cluster !== undefined && entry.database !== undefined
      ? this.clusters.database({ cluster: entry.cluster, database: entry.database })
      : this.clusters.mainDatabase();
  }

  /** Drops a native collection with its indexes; a collection that is not there is no error. */
  async drop(entry: NativeCollection): Promise<void> {
    try {
      await this.itemsOf(entry).drop();
    } catch (error) {
      if (!isNamespaceNotFound(error)) throw error;
    }
  }

  /**
   * Collection statistics (`$collStats`, one result per shard, summed): the item count and the
   * data size from the database's own bookkeeping, without a scan. `$collStats` rather than
   * estimatedDocumentCount for counts too: both read metadata on MongoDB, but FerretDB answers
   * the `count` command behind estimatedDocumentCount by reading every document (2 s at 100,000
   * here) and `$collStats` from its table statistics (25 ms).
   */
  async stats(
    entry: NativeCollection,
    withSize = true,
  ): Promise<{ count: number; sizeBytes: number }> {
    let shards: { count?: number; storageStats?: { size?: number } }[];
    try {
      shards = await this.itemsOf(entry)
        .aggregate<{ count?: number; storageStats?: { size?: number } }>(
          [{ $collStats: { count: {}, ...(withSize ? { storageStats: {} } : {}) } }],
          { maxTimeMS: this.maxTimeMS },
        )
        .toArray();
    } catch (error) {
      // Not created yet, or dropped under a request that read its registry entry before.
      if (isNamespaceNotFound(error)) return { count: 0, sizeBytes: 0 };
      throw error;
    }
    let count = 0;
    let sizeBytes = 0;
    for (const shard of shards) {
      count += shard.count ?? 0;
      sizeBytes += shard.storageStats?.size ?? 0;
    }
    return { count, sizeBytes };
  }

  /** The collection's indexes, `_id_` included; none when the collection does not exist yet. */
  async listIndexes(entry: NativeCollection): Promise<IndexInfo[]> {
    try {
      const indexes = (await this.itemsOf(entry).listIndexes().toArray()) as {
        name: string;
        key: Record<string, 1 | -1>;
        unique?: boolean;
      }[];
      return indexes.map((index) => ({
        name: index.name,
        fields: { ...index.key },
        // _id_ is unique although listIndexes does not say so.
        unique: index.unique === true || index.name === '_id_',
      }));
    } catch (error) {
      if (isNamespaceNotFound(error)) return [];
      throw error;
    }
  }

  async createIndex(
    entry: NativeCollection,
    name: string,
    fields: Record<string, 1 | -1>,
    unique: boolean,
  ): Promise<CreateIndexResult> {
    try {
      await this.itemsOf(entry).createIndex(fields, {
        name,
        ...(unique ? { unique: true } : {}),
      });
      return 'created';
    } catch (error) {
      if (isUniqueViolation(error)) return DUPLICATE;
      if (isIndexConflict(error)) return 'conflict';
      // Other servers may word it differently: look for duplicates before giving up.
      if (unique && (await this.hasDuplicates(entry, Object.keys(fields)))) return DUPLICATE;
      throw error;
    }
  }

  private async hasDuplicates(entry: NativeCollection, paths: string[]): Promise<boolean> {
    const key = Object.fromEntries(paths.map((path, i) => [`k${i}`, `$${path}`]));
    const groups = await this.itemsOf(entry)
      .aggregate(
        [{ $group: { _id: key, n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }, { $limit: 1 }],
        { maxTimeMS: this.maxTimeMS },
      )
      .toArray();
    return groups.length > 0;
  }

  /**
   * Gives `to` (the same collection in another database, a move's target) the indexes of `from`:
   * missing ones are made, ones of another definition made again, extra ones dropped.
   */
  async copyIndexes(from: NativeCollection, to: NativeCollection): Promise<void> {
    const wanted = await this.listIndexes(from);
    const present = await this.listIndexes(to);
    const same = (a: IndexInfo, b: IndexInfo) =>
      a.unique === b.unique && JSON.stringify(a.fields) === JSON.stringify(b.fields);
    for (const index of present) {
      if (index.name === '_id_') continue;
      const source = wanted.find((w) => w.name === index.name);
      if (!source || !same(source, index)) await this.dropIndex(to, index.name);
    }
    for (const index of wanted) {
      if (index.name === '_id_') continue;
      const target = present.find((p) => p.name === index.name);
      if (target && same(target, index)) continue;
      await this.itemsOf(to).createIndex(index.fields, {
        name: index.name,
        ...(index.unique ? { unique: true } : {}),
      });
    }
  }

  /** Drops a tenant database of a cluster, with what is left in it (a moved tenant's source). */
  async dropDatabase(location: { cluster: string; database: string }): Promise<void> {
    await this.clusters.database(location).dropDatabase();
  }

  async dropIndex(entry: NativeCollection, name: string): Promise<void> {
    await this.itemsOf(entry).dropIndex(name);
  }
}
