import { Injectable } from '@nestjs/common';
import type { Collection, Db, Document } from 'mongodb';
import type { Schema } from 'mongoose';
import { allSettledOrThrow } from '../common/scheduling/all-settled';
import {
  copyAppended,
  syncDocuments,
  type ChangedCopyProgress,
  type SyncResult,
} from '../common/mongo/document-sync';
import { tenantFilter, type Tenant } from '../common/tenancy/namespace';
import { DataClusters } from './data-clusters';
import { TenantPlacements } from './tenant-placements.service';

/** A collection of one cluster database (cluster null: the main database). */
export interface ClusterCollection {
  cluster: string | null;
  collection: Collection<Document>;
}

/**
 * The collections every cluster keeps for the tenants placed there, beside their own databases:
 * in the cluster's *cluster database*, named like the main one (on the main deployment, the main
 * database itself). A tenant's change feed and webhook deliveries are in the cluster database of
 * the cluster its placement names for them (`feed`; null: the main database, for tenants placed
 * before, and those never placed). The main database's indexes are made with the service's
 * others; another cluster database's are made here from the collection's schema, once per
 * instance, before its first use.
 */
@Injectable()
export class ClusterDatabases {
  private readonly indexed = new Map<string, Promise<unknown>>();
  /** Per cluster (null: the main database), its database handle and the collections' handles. */
  private readonly handles = new Map<
    string | null,
    { db: Db; collections: Map<string, Collection> }
  >();

  constructor(
    private readonly clusters: DataClusters,
    private readonly placements: TenantPlacements,
  ) {}

  /** The cluster whose cluster database holds the tenant's feed and deliveries now. */
  async clusterOf(tenant: Tenant): Promise<string | null> {
    return (await this.placements.feedOf(tenant)).cluster;
  }

  /** Whether the tenant's feed and deliveries are being moved (background work waits). */
  async isMoving(tenant: Tenant): Promise<boolean> {
    return (await this.placements.feedOf(tenant)).moving !== undefined;
  }

  /** The collection `name` (of `schema`) in a cluster database, its indexes made first. */
  async collection(cluster: string | null, name: string, schema: Schema): Promise<Collection> {
    const db = this.clusters.clusterDatabase(cluster);
    if (cluster !== null) await this.ensureIndexes(cluster, db, name, schema);
    return this.handleOf(cluster, db, name);
  }

  /**
   * The driver's handle of `name` in `db`, made once per database handle: `Db.collection`
   * resolves its options on every call, which cost 2 % of a POST's CPU (the feed's intents and
   * events are reached on every write). A few names per cluster, so the map stays small.
   */
  private handleOf(cluster: string | null, db: Db, name: string): Collection {
    let kept = this.handles.get(cluster);
    if (kept?.db !== db) {
      kept = { db, collections: new Map() };
      this.handles.set(cluster, kept);
    }
    let collection = kept.collections.get(name);
    if (!collection) {
      collection = db.collection(name);
      kept.collections.set(name, collection);
    }
    return collection;
  }

  /**
   * The collection `name` in every cluster database, one per deployment, for sweeps (which read
   * and delete: they need no index made first, and a cluster that is down holds up no other).
   */
  everywhere(name: string): ClusterCollection[] {
    return this.clusters
      .clusterDatabases()
      .map(({ cluster, db }) => ({ cluster, collection: db.collection(name) }));
  }

  /**
   * Makes the tenant's documents of collection `name` in the cluster database of `to` those of
   * `from` (a move; syncDocuments, compared by `_id` and `fingerprint`).
   */
  async copyTenant(
    name: string,
    schema: Schema,
    tenant: Tenant,
    move: { from: string | null; to: string },
    fingerprint: readonly string[],
    onBatch?: (progress: ChangedCopyProgress) => Promise<void>,
  ): Promise<SyncResult> {
    const [source, target] = await Promise.all([
      this.collection(move.from, name, schema),
      this.collection(move.to, name, schema),
    ]);
    return syncDocuments(source, target, tenantFilter(tenant), fingerprint, onBatch);
  }

  /**
   * Copies the tenant's documents of `name` (which never change once written) whose `marker` is
   * at or after `since` from the cluster database of `move.from` to that of `move.to` (a move's
   * catch-up pass: copyAppended).
   */
  async copyTenantAppended(
    name: string,
    schema: Schema,
    tenant: Tenant,
    move: { from: string | null; to: string },
    marker: string,
    since: Date,
    onBatch: (progress: ChangedCopyProgress) => Promise<void>,
  ): Promise<SyncResult> {
    const [source, target] = await Promise.all([
      this.collection(move.from, name, schema),
      this.collection(move.to, name, schema),
    ]);
    return copyAppended(source, target, tenantFilter(tenant), marker, since, onBatch);
  }

  /** Deletes the tenant's documents of `name` in one cluster database (a moved tenant's source). */
  async deleteTenantIn(name: string, tenant: Tenant, cluster: string | null): Promise<void> {
    await this.clusters.clusterDatabase(cluster).collection(name).deleteMany(tenantFilter(tenant));
  }

  /** Deletes the tenant's documents of `name` in every cluster database (an erasure). */
  async deleteTenantEverywhere(name: string, tenant: Tenant): Promise<void> {
    await onEveryCluster(this.everywhere(name), ({ collection }) =>
      collection.deleteMany(tenantFilter(tenant)),
    );
  }

  private async ensureIndexes(cluster: string, db: Db, name: string, schema: Schema) {
    const key = `${cluster}/${name}`;
    let made = this.indexed.get(key);
    if (!made) {
      made = (async () => {
        for (const [fields, options] of schema.indexes()) {
          await db
            .collection(name)
            .createIndex(fields as Record<string, 1 | -1>, options as Document);
        }
      })();
      this.indexed.set(key, made);
      // A failed attempt is tried again by the next use.
      made.catch(() => this.indexed.delete(key));
    }
    await made;
  }
}

/**
 * Runs `work` on every cluster database's collections at once, so that a cluster that is down or
 * frozen holds up only its own; the first failure is thrown once all are done.
 */
export async function onEveryCluster<I extends { cluster: string | null }, T>(
  clusters: I[],
  work: (at: I) => Promise<T>,
): Promise<T[]> {
  return allSettledOrThrow(clusters.map(work));
}
