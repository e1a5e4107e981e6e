import { Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import {
  namespaceFilter,
  namespaceOf,
  type Namespace,
  type StoredNamespace,
  type Tenant,
} from '../common/tenancy/namespace';
import type { EventIntentDocument, PlannedChange } from './event-intent.schema';
import type { ChangeScope } from './event-scope';
import type { EventActor } from './event.schema';
import { FeedCollections, type FeedCollectionPair } from './feed-collections';

/** An intent about to be inserted: the changes a write in `scope` plans. */
export interface NewIntent {
  id: Types.ObjectId;
  scope: ChangeScope;
  changes: PlannedChange[];
  createdAt: Date;
}

/** Where an intent is: its id and the cluster of the cluster database that holds it. */
export interface IntentRef {
  id: Types.ObjectId;
  cluster: string | null;
}

/** A stored intent: the changes a write in `namespace` by `actor` planned. */
export interface StoredIntent extends IntentRef {
  namespace: Namespace;
  actor: EventActor;
  changes: PlannedChange[];
}

/**
 * The `event_intents` collections: writes under way, recorded before they happen, in the feed
 * database of their tenant (FeedCollections), through the driver: this runs on every write, and
 * a model's casting and hooks cost more CPU than the insert itself (bench: change feed
 * comparison).
 */
@Injectable()
export class EventIntentsRepository {
  constructor(private readonly feeds: FeedCollections) {}

  newId(): Types.ObjectId {
    return new Types.ObjectId();
  }

  /** Where the tenant's new intents go. */
  async clusterOf(tenant: Tenant): Promise<string | null> {
    return (await this.feeds.of(tenant)).cluster;
  }

  /** Inserts intents bound for one cluster database in one unordered command. */
  async insertMany(cluster: string | null, intents: NewIntent[]): Promise<void> {
    await (
      await this.feeds.at(cluster)
    ).intents.insertMany(
      intents.map(({ id, scope, changes, createdAt }) => ({
        _id: id,
        ...namespaceFilter({ ...scope.tenant, branch: scope.branch }),
        actor: scope.actor,
        changes,
        createdAt,
      })),
      { ordered: false },
    );
  }

  /** Deletes intents of one cluster database. */
  async deleteMany(cluster: string | null, ids: Types.ObjectId[]): Promise<void> {
    await (await this.feeds.at(cluster)).intents.deleteMany({ _id: { $in: ids } });
  }

  async deleteOne(intent: IntentRef): Promise<void> {
    await (await this.feeds.at(intent.cluster)).intents.deleteOne({ _id: intent.id });
  }

  /** The oldest intents of one cluster database created before `before`, at most `limit`. */
  async findCreatedBefore(
    feed: FeedCollectionPair,
    before: Date,
    limit: number,
  ): Promise<StoredIntent[]> {
    const docs = await feed.intents
      .find({ createdAt: { $lt: before } })
      .sort({ createdAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map((raw) => {
      const doc = raw as unknown as EventIntentDocument & StoredNamespace;
      return {
        id: doc._id,
        cluster: feed.cluster,
        namespace: namespaceOf(doc),
        actor: doc.actor,
        changes: doc.changes,
      };
    });
  }
}
