import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { LookupCache } from '../common/cache/lookup-cache';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig, type DataClusterConfig } from '../config';
import { DataClusters } from './data-clusters';
import { NoOpenClusterError, UnknownRegionError } from './placement.errors';
import { tenantDatabaseName, type TenantLocation } from './tenant-location';
import { TenantPlacementsRepository, type TenantPlacement } from './tenant-placements.repository';

/** The cache's key of a tenant: its kind (of a fixed set, without NUL), then its id. */
function cacheKeyOf(tenant: Tenant): string {
  return `${tenant.kind}\u0000${tenant.id}`;
}

/** What the cache keeps for a tenant that has no placement. */
const UNPLACED = Object.freeze({ unplaced: true as const });

/** Where a tenant's change feed lives, and whether a move is taking it elsewhere. */
export interface FeedLocation {
  /** A cluster of DATA_CLUSTERS, whose cluster database holds it; null: the main database. */
  cluster: string | null;
  moving?: { to: string; move: string; phase: 'copying' | 'paused' };
}

export class UnconfiguredClusterError extends Error {
  constructor(clusters: string[]) {
    super(
      `tenant placements name clusters that DATA_CLUSTERS does not list: ${clusters.join(', ')}. ` +
        'Configure them again, or move their tenants off before removing a cluster.',
    );
    this.name = 'UnconfiguredClusterError';
  }
}

/**
 * Places new tenants on the clusters of DATA_CLUSTERS and says where a tenant's data lives.
 *
 * A new tenant goes to an open cluster — of the requested region, if any — with the fewest
 * placed tenants, ties broken at random (concurrent creations on several instances then spread
 * too). A tenant without a placement (created before placements existed) lives in the main
 * database. Placements are cached like registry entries: they never change outside a move.
 */
@Injectable()
export class TenantPlacements implements OnModuleInit {
  /** Placements read lately, by tenant; `UNPLACED` for tenants never placed (every write asks). */
  private readonly cache: LookupCache<TenantPlacement | typeof UNPLACED>;
  private readonly mainDatabase: string;

  constructor(
    private readonly placements: TenantPlacementsRepository,
    private readonly clusters: DataClusters,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const { registryCacheMs: ttlMs, registryCacheSize: max } = config.lifecycle;
    this.cache = new LookupCache({ ttlMs, max });
    this.mainDatabase = config.database.dbName;
  }

  /** Refuses to start while a placement names a cluster DATA_CLUSTERS does not list. */
  async onModuleInit(): Promise<void> {
    const missing = (await this.placements.clustersInUse()).filter((c) => !this.clusters.get(c));
    if (missing.length > 0) throw new UnconfiguredClusterError(missing.sort());
  }

  /**
   * The cluster a new tenant goes to. `region` (validated here: UNKNOWN_REGION, NO_OPEN_CLUSTER)
   * narrows the choice to that region's clusters. Called before the tenant is written, so a bad
   * region creates nothing.
   */
  async choose(region?: string): Promise<DataClusterConfig> {
    let candidates = this.clusters.list();
    if (region !== undefined) {
      candidates = candidates.filter((cluster) => cluster.region === region);
      if (candidates.length === 0) {
        throw new UnknownRegionError(region, [
          ...new Set(this.clusters.list().map((c) => c.region)),
        ]);
      }
    }
    const open = candidates.filter((cluster) => cluster.open);
    if (open.length === 0) throw new NoOpenClusterError(region ?? '');
    const counts = await Promise.all(open.map((cluster) => this.placements.countOn(cluster.name)));
    const fewest = Math.min(...counts);
    const least = open.filter((_, i) => counts[i] === fewest);
    return least[randomInt(least.length)] as DataClusterConfig;
  }

  /**
   * Records the tenant's placement on `cluster`. A tenant placed already keeps its placement (a
   * tenant created again after an erasure, or a creation retried).
   */
  async place(tenant: Tenant, cluster: DataClusterConfig): Promise<void> {
    const database = tenantDatabaseName(this.mainDatabase, tenant);
    await this.placements.insert({ cluster: cluster.name, database });
  }

  /**
   * The placement a move gives the tenant: new collections go to `cluster` from now on (on every
   * instance once its cached placement has expired, REGISTRY_CACHE_MS).
   */
  async relocate(tenant: Tenant, cluster: string): Promise<TenantLocation & { cluster: string }> {
    const database = this.databaseOf(tenant);
    await this.placements.setCluster(database, cluster);
    this.cache.forgetKey(cacheKeyOf(tenant));
    return { cluster, database };
  }

  /** The database a tenant's placement names, on whichever cluster. */
  databaseOf(tenant: Tenant): string {
    return tenantDatabaseName(this.mainDatabase, tenant);
  }

  /** Where the tenant's collections live; the main database for a tenant never placed. */
  async locate(tenant: Tenant): Promise<TenantLocation> {
    const found = await this.placementOf(tenant);
    return found
      ? { cluster: found.cluster, database: found.database }
      : { cluster: null, database: this.mainDatabase };
  }

  /**
   * Where the tenant's change feed lives: the cluster database of a cluster, or the main database
   * (`cluster: null`: tenants placed before feeds were). A feed being moved is read afresh each
   * time, like a registry entry being moved.
   */
  async feedOf(tenant: Tenant, { fresh = false } = {}): Promise<FeedLocation> {
    let found = await this.placementOf(tenant);
    if (found?.feedMoving || fresh) found = await this.placementOf(tenant, true);
    return feedLocation(found);
  }

  /**
   * `feedOf` as this instance has it cached (read when it has none), even a feed being moved: a
   * move gate's first look, which reads the placement afresh itself once its write is marked.
   */
  async cachedFeedOf(tenant: Tenant): Promise<FeedLocation> {
    return feedLocation(await this.placementOf(tenant));
  }

  /** Starts (`copying`), pauses or ends (null, where it was) the move of the tenant's feed. */
  async setFeedMoving(tenant: Tenant, moving: FeedLocation['moving'] | null): Promise<void> {
    const database = this.databaseOf(tenant);
    await this.placements.setFeedMoving(database, moving ?? null);
    this.cache.forgetKey(cacheKeyOf(tenant));
  }

  /** Ends the move of the tenant's feed at `cluster`. */
  async switchFeed(tenant: Tenant, cluster: string): Promise<void> {
    const database = this.databaseOf(tenant);
    await this.placements.switchFeed(database, cluster);
    this.cache.forgetKey(cacheKeyOf(tenant));
  }

  private async placementOf(tenant: Tenant, fresh = false): Promise<TenantPlacement | null> {
    const key = cacheKeyOf(tenant);
    // The database name is a digest: computed only when the placement is read, not per request.
    const read = async () => (await this.placements.find(this.databaseOf(tenant))) ?? UNPLACED;
    let found: TenantPlacement | typeof UNPLACED | null;
    if (fresh) {
      const mark = this.cache.mark();
      found = await read();
      this.cache.remember(key, found, mark);
    } else {
      found = await this.cache.load(key, read);
    }
    return found === null || 'unplaced' in found ? null : found;
  }

  /** Tenants placed on each configured cluster. */
  async tenantsOn(cluster: string): Promise<number> {
    return this.placements.countOn(cluster);
  }
}

function feedLocation(found: TenantPlacement | null): FeedLocation {
  return {
    cluster: found?.feed ?? null,
    ...(found?.feedMoving ? { moving: found.feedMoving } : {}),
  };
}
