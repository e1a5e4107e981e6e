import { Injectable } from '@nestjs/common';
import type { Collection, Db, Document } from 'mongodb';
import type { Schema } from 'mongoose';
import type { Tenant } from '../common/tenancy/namespace';
import { DataClusters, TenantPlacements } from '../placement';
import { EventIntentSchema } from './event-intent.schema';
import { EventSchema } from './event.schema';

const EVENTS = 'events';
const INTENTS = 'event_intents';

/** One feed database's collections. */
export interface FeedCollectionPair {
  cluster: string | null;
  events: Collection<Document>;
  intents: Collection<Document>;
}

/**
 * Where change feeds live: a tenant's `events` and `event_intents` are in the feed database of
 * the cluster its placement names for its feed (the main database for tenants placed before
 * feeds were, and for those never placed), so a tenant's events — which carry its items — live
 * on its cluster. The main database's indexes are made with the service's others; those of
 * another cluster's feed database are made here, once per instance, before its first use.
 */
@Injectable()
export class FeedCollections {
  private readonly indexed = new Map<string, Promise<unknown>>();

  constructor(
    private readonly clusters: DataClusters,
    private readonly placements: TenantPlacements,
  ) {}

  /** The tenant's feed collections, where its placement says they are now. */
  async of(tenant: Tenant): Promise<FeedCollectionPair> {
    return this.at((await this.placements.feedOf(tenant)).cluster);
  }

  /** The feed collections of a cluster's feed database (null: the main database). */
  async at(cluster: string | null): Promise<FeedCollectionPair> {
    const db = this.clusters.feedDatabase(cluster);
    if (cluster !== null) await this.ensureIndexes(cluster, db);
    return pairIn(cluster, db);
  }

  /**
   * Every feed database's collections, one per deployment, for sweeps (which read and delete:
   * they need no index made first, and a cluster that is down holds up no other's).
   */
  every(): FeedCollectionPair[] {
    return this.clusters.feedDatabases().map(({ cluster, db }) => pairIn(cluster, db));
  }

  private async ensureIndexes(cluster: string, db: Db): Promise<void> {
    let made = this.indexed.get(cluster);
    if (!made) {
      made = Promise.all([
        createIndexes(db.collection(EVENTS), EventSchema),
        createIndexes(db.collection(INTENTS), EventIntentSchema),
      ]);
      this.indexed.set(cluster, made);
      // A failed attempt is tried again by the next use.
      made.catch(() => this.indexed.delete(cluster));
    }
    await made;
  }
}

function pairIn(cluster: string | null, db: Db): FeedCollectionPair {
  return { cluster, events: db.collection(EVENTS), intents: db.collection(INTENTS) };
}

/** The indexes a schema declares, made on a collection the model does not know. */
async function createIndexes(collection: Collection<Document>, schema: Schema): Promise<void> {
  for (const [key, options] of schema.indexes()) {
    await collection.createIndex(key as Record<string, 1 | -1>, options as Document);
  }
}
