import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { LRUCache } from 'lru-cache';
import { MongoClient, type Db } from 'mongodb';
import type { Connection } from 'mongoose';
import { boundedDriverOptions } from '../common/mongo/bounded-driver-options';
import { checkPoolsEvery } from '../common/mongo/pool-checks';
import { APP_CONFIG, type AppConfig, type DataClusterConfig } from '../config';
import type { TenantLocation } from './tenant-location';

/** Called with each client this opens (database command metrics). */
export const CLUSTER_CLIENT_WATCHER = Symbol('CLUSTER_CLIENT_WATCHER');
export type ClusterClientWatcher = (client: MongoClient) => void;

/**
 * The deployments of DATA_CLUSTERS and a client for each, opened on first use with its own
 * bounded pool (DATA_CLUSTER_POOL_SIZE) and the main connection's timeouts, so a dead or frozen
 * cluster fails its own operations within the same bound and takes no connection of another.
 * Without DATA_CLUSTERS the one cluster `default` is the main connection.
 */
@Injectable()
export class DataClusters implements OnApplicationShutdown {
  private readonly byName: ReadonlyMap<string, DataClusterConfig>;
  private readonly clients = new Map<string, MongoClient>();
  /**
   * The driver's handles of the databases in use (`<cluster>\0<database>`), as many as the
   * registry entries an instance keeps (REGISTRY_CACHE_SIZE): a handle costs an options
   * resolution to make, and requests would make one each.
   */
  private readonly handles: LRUCache<string, Db>;

  constructor(
    @InjectConnection() private readonly main: Connection,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLUSTER_CLIENT_WATCHER) private readonly watch: ClusterClientWatcher,
  ) {
    this.byName = new Map(config.clusters.list.map((cluster) => [cluster.name, cluster]));
    this.handles = new LRUCache({ max: config.lifecycle.registryCacheSize });
  }

  list(): DataClusterConfig[] {
    return this.config.clusters.list;
  }

  get(name: string): DataClusterConfig | undefined {
    return this.byName.get(name);
  }

  /** The database a location names; throws for a cluster that is not configured. */
  database(location: TenantLocation): Db {
    if (location.cluster === null) return this.mainDatabase();
    return this.handleOf(location.cluster, location.database);
  }

  /**
   * The cluster database of a cluster: a database named like the main one, holding the change
   * feeds and webhook deliveries of the tenants placed there (null: the main database itself).
   */
  clusterDatabase(cluster: string | null): Db {
    if (cluster === null) return this.mainDatabase();
    return this.handleOf(cluster, this.config.database.dbName);
  }

  /**
   * The cluster databases of every configured cluster and the main database, one per deployment
   * (two cluster names for one deployment, or a cluster on the main deployment, share one).
   */
  clusterDatabases(): { cluster: string | null; db: Db }[] {
    const found: { cluster: string | null; db: Db }[] = [
      { cluster: null, db: this.mainDatabase() },
    ];
    for (const { name } of this.list()) {
      if (!found.some((f) => this.sameDeployment(f.cluster, name))) {
        found.push({ cluster: name, db: this.clusterDatabase(name) });
      }
    }
    return found;
  }

  /** The service's main database (the control plane, and tenants never placed). */
  mainDatabase(): Db {
    const db = this.main.db;
    if (!db) throw new Error('database connection is not open');
    return db;
  }

  /** Whether two clusters (null: the main connection) are one deployment (the same URI). */
  sameDeployment(a: string | null, b: string | null): boolean {
    // null, and a cluster without a URI (`default`), are the main connection.
    const uri = (name: string | null) =>
      (name === null ? undefined : this.byName.get(name)?.uri) ?? this.config.database.uri;
    return uri(a) === uri(b);
  }

  /** Whether the cluster answers a ping within the selection timeout. */
  async reachable(name: string): Promise<boolean> {
    try {
      await this.client(name).db('admin').command({ ping: 1 });
      return true;
    } catch {
      return false;
    }
  }

  private handleOf(cluster: string, database: string): Db {
    const key = `${cluster}\0${database}`;
    let db = this.handles.get(key);
    if (!db) {
      db = this.client(cluster).db(database);
      this.handles.set(key, db);
    }
    return db;
  }

  private client(name: string): MongoClient {
    const cluster = this.byName.get(name);
    if (!cluster) throw new Error(`cluster ${name} is not in DATA_CLUSTERS`);
    if (cluster.uri === undefined) return this.main.getClient();
    let client = this.clients.get(name);
    if (!client) {
      client = checkPoolsEvery(
        new MongoClient(cluster.uri, {
          ...boundedDriverOptions(this.config.database),
          maxPoolSize: this.config.clusters.poolSize,
          monitorCommands: this.config.metrics.enabled && this.config.metrics.databaseCommands,
        }),
      );
      this.watch(client);
      this.clients.set(name, client);
    }
    return client;
  }

  async onApplicationShutdown(): Promise<void> {
    const open = [...this.clients.values()];
    this.clients.clear();
    this.handles.clear();
    await Promise.all(open.map((client) => client.close().catch(() => undefined)));
  }
}
