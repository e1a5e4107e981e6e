import { Injectable } from '@nestjs/common';
import type { Collection, Document } from 'mongodb';
import type { ChangedCopyProgress, SyncResult } from '../common/mongo/document-sync';
import type { Tenant } from '../common/tenancy/namespace';
import { ClusterDatabases } from '../placement';
import { EventIntentSchema } from './event-intent.schema';
import { EventSchema } from './event.schema';

/** Hears how many documents a copy has left (a move's progress). */
export type CopyProgress = (progress: ChangedCopyProgress) => Promise<void>;

export const EVENTS = 'events';
export const INTENTS = 'event_intents';

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

  /**
   * Makes the tenant's events or intents in the cluster database of `to` those of `from` (a
   * move). Both never change once written, so `_id`s alone tell what to copy and to delete.
   */
  copyTenant(
    tenant: Tenant,
    move: { from: string | null; to: string },
    which: 'events' | 'intents',
    onBatch?: CopyProgress,
  ): Promise<SyncResult> {
    const [name, schema] =
      which === 'events' ? [EVENTS, EventSchema] : [INTENTS, EventIntentSchema];
    return this.databases.copyTenant(name, schema, tenant, move, [], onBatch);
  }

  /** Copies the tenant's events appended at or after `since` (a move's catch-up pass). */
  copyTenantEventsSince(
    tenant: Tenant,
    move: { from: string | null; to: string },
    since: Date,
    onBatch: CopyProgress,
  ): Promise<SyncResult> {
    return this.databases.copyTenantAppended(
      EVENTS,
      EventSchema,
      tenant,
      move,
      'at',
      since,
      onBatch,
    );
  }

  /** Deletes the tenant's intents and events in one cluster database (null: the main one). */
  async deleteTenantIn(tenant: Tenant, cluster: string | null, which = [INTENTS, EVENTS]) {
    for (const name of which) await this.databases.deleteTenantIn(name, tenant, cluster);
  }

  /** Deletes the tenant's intents and events in every cluster database (an erasure). */
  async deleteTenantEverywhere(tenant: Tenant): Promise<void> {
    for (const name of [INTENTS, EVENTS]) {
      await this.databases.deleteTenantEverywhere(name, tenant);
    }
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
