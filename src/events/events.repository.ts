import { Injectable } from '@nestjs/common';
import type { Document, Filter } from 'mongodb';
import { Types, type QueryFilter } from 'mongoose';
import { insertInOrder } from '../common/mongo/ordered-insert';
import {
  namespaceFilter,
  namespaceKey,
  namespaceOf,
  type Namespace,
  type StoredNamespace,
  type Tenant,
} from '../common/tenancy/namespace';
import type { ChangeScope, FeedEvent, RecordedChange } from './event-scope';
import type { EventDocument } from './event.schema';
import { FeedCollections, type FeedCollectionPair } from './feed-collections';

/** A change to append under a number: who made it, and what it was. */
export interface NumberedChange {
  scope: ChangeScope;
  change: RecordedChange;
  /** The intent of the write it comes from, when it has one. */
  intent?: string;
}

/** Which of a namespace's events a read takes, beyond the namespace. */
export interface EventRange {
  after: number;
  /** Only events up to this number. */
  through?: number;
  limit: number;
}

function toFeedEvent(doc: EventDocument): FeedEvent {
  return {
    seq: doc.seq,
    type: doc.type,
    resource: doc.resource,
    ...(doc.collection !== undefined ? { collection: doc.collection } : {}),
    key: doc.key,
    branch: doc.branch,
    at: doc.at,
    actor: doc.actor,
    owner: doc.owner,
    data: doc.data,
    ...(doc.prior !== undefined ? { prior: doc.prior } : {}),
    ...(doc.formerOwner !== undefined ? { formerOwner: doc.formerOwner } : {}),
  };
}

/**
 * The `events` collections: every namespace's feed, numbered per namespace, in the cluster database
 * its tenant's placement names (FeedCollections). Through the driver: a model is bound to the
 * main database, and its casting costs more CPU than these commands.
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly feeds: FeedCollections) {}

  private async eventsOf(tenant: Tenant) {
    return (await this.feeds.of(tenant)).events;
  }

  /** The newest event number of a namespace; 0 before its first event. */
  async newestSeq(namespace: Namespace): Promise<number> {
    return this.newestSeqIn(await this.feeds.of(namespace), namespace);
  }

  /** The newest event number of a namespace in one cluster database. */
  async newestSeqIn(feed: FeedCollectionPair, namespace: Namespace): Promise<number> {
    const newest = await feed.events.findOne<{ seq: number }>(namespaceFilter(namespace), {
      sort: { seq: -1 },
      projection: { seq: 1 },
    });
    return newest?.seq ?? 0;
  }

  /** The oldest event number a namespace keeps (undefined: it has none). */
  async oldestSeq(namespace: Namespace): Promise<number | undefined> {
    const oldest = await (
      await this.eventsOf(namespace)
    ).findOne<{ seq: number }>(namespaceFilter(namespace), {
      sort: { seq: 1 },
      projection: { seq: 1 },
    });
    return oldest?.seq;
  }

  /** A namespace's events in `range` that `selection` selects, oldest first. */
  async findInRange(
    namespace: Namespace,
    range: EventRange,
    selection: QueryFilter<EventDocument>,
  ): Promise<FeedEvent[]> {
    const filter = {
      ...namespaceFilter(namespace),
      seq: { $gt: range.after, ...(range.through !== undefined ? { $lte: range.through } : {}) },
      ...selection,
    } as Filter<Document>;
    const docs = await (
      await this.eventsOf(namespace)
    )
      .find(filter)
      .sort({ seq: 1 })
      .limit(range.limit)
      .toArray();
    return docs.map((doc) => toFeedEvent(doc as unknown as EventDocument));
  }

  /**
   * Inserts changes of one namespace numbered from `first` on, in order (insertInOrder: no event
   * is written before the ones numbered ahead of it, so no reader sees a gap that fills later). Returns how many went in before a number
   * already taken refused one (all of them when none was).
   */
  async insertNumbered(
    namespace: Namespace,
    first: number,
    changes: NumberedChange[],
  ): Promise<number> {
    const ns = namespaceFilter(namespace);
    const at = new Date();
    const docs = changes.map(({ scope, change, intent }, i) => ({
      _id: new Types.ObjectId(),
      ...ns,
      seq: first + i,
      type: change.type,
      resource: change.resource,
      ...(change.collection !== undefined ? { collection: change.collection } : {}),
      key: change.key,
      at,
      actor: scope.actor,
      owner: change.owner,
      data: change.data,
      ...(change.prior !== undefined ? { prior: change.prior } : {}),
      ...(change.formerOwner !== undefined ? { formerOwner: change.formerOwner } : {}),
      ...(intent !== undefined ? { intent } : {}),
    }));
    const { inserted } = await insertInOrder(await this.eventsOf(namespace), docs);
    return inserted;
  }

  /**
   * Whether the write of `intent` appended its events already. Read only for intents whose
   * writer died, so it filters the namespace's events without an index of its own.
   */
  async hasEventsOf(namespace: Namespace, intent: string): Promise<boolean> {
    const found = await (
      await this.eventsOf(namespace)
    ).findOne({ ...namespaceFilter(namespace), intent }, { projection: { _id: 1 } });
    return found !== null;
  }

  /** The namespaces of one cluster database's events older than `cutoff`, looking at `limit` such events at most. */
  async namespacesWithEventsBefore(
    feed: FeedCollectionPair,
    cutoff: Date,
    limit: number,
  ): Promise<Namespace[]> {
    const old = await feed.events
      .find({ at: { $lt: cutoff } }, { projection: { tenantKind: 1, tenant: 1, branch: 1 } })
      .limit(limit)
      .toArray();
    const namespaces = old.map((doc) => namespaceOf(doc as unknown as StoredNamespace));
    return [...new Map(namespaces.map((ns) => [namespaceKey(ns), ns])).values()];
  }

  /** Deletes a namespace's events in one cluster database older than `cutoff` numbered below `seq`. */
  async deleteOlderThan(
    feed: FeedCollectionPair,
    namespace: Namespace,
    cutoff: Date,
    seq: number,
  ): Promise<void> {
    await feed.events.deleteMany({
      ...namespaceFilter(namespace),
      at: { $lt: cutoff },
      seq: { $lt: seq },
    });
  }
}
