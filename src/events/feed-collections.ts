import { Injectable } from '@nestjs/common';
import type { Collection, Document } from 'mongodb';
import type { Tenant } from '../common/tenancy/namespace';
import { ClusterDatabases } from '../placement';
import { EventIntentSchema } from './event-intent.schema';
import { EventSchema } from './event.schema';

const EVENTS = 'events';
const INTENTS = 'event_intents';

/** One cluster database's feed collections. */
export interface FeedCollectionPair {
  cluster: string | null;
  events: Collection<Document>;
  intents: Collection<Document>;
}

/**
 * Where change feeds live: a tenant's `events` and `event_intents` are in the cluster database
 * of the cluster its placement names for its feed (ClusterDatabases), so a tenant's events —
 * which carry its items — live on its cluster.
 */
@Injectable()
export class FeedCollections {
  constructor(private readonly databases: ClusterDatabases) {}

  /** The tenant's feed collections, where its placement says they are now. */
  async of(tenant: Tenant): Promise<FeedCollectionPair> {
    return this.at(await this.databases.clusterOf(tenant));
  }

  /** The feed collections of a cluster database (null: the main database). */
  async at(cluster: string | null): Promise<FeedCollectionPair> {
    const [events, intents] = await Promise.all([
      this.databases.collection(cluster, EVENTS, EventSchema),
      this.databases.collection(cluster, INTENTS, EventIntentSchema),
    ]);
    return { cluster, events, intents };
  }

  /** Every cluster database's feed collections, one per deployment (for sweeps). */
  every(): FeedCollectionPair[] {
    const intents = this.databases.everywhere(INTENTS);
    return this.databases.everywhere(EVENTS).map(({ cluster, collection }, i) => ({
      cluster,
      events: collection,
      intents: (intents[i] as { collection: Collection<Document> }).collection,
    }));
  }
}
