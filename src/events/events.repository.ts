import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model, type QueryFilter } from 'mongoose';
import { insertedBeforeRefusal } from '../common/mongo/duplicate';
import {
  namespaceFilter,
  namespaceKey,
  namespaceOf,
  tenantFilter,
  type Namespace,
  type StoredNamespace,
  type Tenant,
} from '../common/tenancy/namespace';
import type { ChangeScope, FeedEvent, RecordedChange } from './event-scope';
import { EventDocument } from './event.schema';

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
  };
}

/** The `events` collection: every namespace's feed, numbered per namespace. */
@Injectable()
export class EventsRepository {
  constructor(@InjectModel(EventDocument.name) private readonly events: Model<EventDocument>) {}

  /** The newest event number of a namespace; 0 before its first event. */
  async newestSeq(namespace: Namespace): Promise<number> {
    // The driver's collection: this runs for every append that guessed wrong and every poll.
    const newest = await this.events.collection.findOne<{ seq: number }>(
      namespaceFilter(namespace),
      { sort: { seq: -1 }, projection: { seq: 1 } },
    );
    return newest?.seq ?? 0;
  }

  /** The oldest event number a namespace keeps (undefined: it has none). */
  async oldestSeq(namespace: Namespace): Promise<number | undefined> {
    const [oldest] = await this.events
      .find(namespaceFilter(namespace))
      .sort({ seq: 1 })
      .limit(1)
      .select({ seq: 1 })
      .lean<{ seq: number }[]>()
      .exec();
    return oldest?.seq;
  }

  /** A namespace's events in `range` that `selection` selects, oldest first. */
  async findInRange(
    namespace: Namespace,
    range: EventRange,
    selection: QueryFilter<EventDocument>,
  ): Promise<FeedEvent[]> {
    const filter: QueryFilter<EventDocument> = {
      ...namespaceFilter(namespace),
      seq: { $gt: range.after, ...(range.through !== undefined ? { $lte: range.through } : {}) },
      ...selection,
    };
    const docs = await this.events
      .find(filter)
      .sort({ seq: 1 })
      .limit(range.limit)
      .lean<EventDocument[]>()
      .exec();
    return docs.map(toFeedEvent);
  }

  /**
   * Inserts changes of one namespace numbered from `first` on, in order, in one ordered command
   * (so no reader sees a gap that fills later), through the driver's collection (a model's
   * casting costs more CPU than the insert). Returns how many went in before a number already
   * taken refused one (all of them when none was).
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
      ...(intent !== undefined ? { intent } : {}),
    }));
    try {
      await this.events.collection.insertMany(docs, { ordered: true });
      return docs.length;
    } catch (error) {
      const before = insertedBeforeRefusal(error);
      if (before === null) throw error;
      return before;
    }
  }

  /**
   * Whether the write of `intent` appended its events already. Read only for intents whose
   * writer died, so it filters the namespace's events without an index of its own.
   */
  async hasEventsOf(namespace: Namespace, intent: string): Promise<boolean> {
    const found = await this.events
      .findOne({ ...namespaceFilter(namespace), intent }, { _id: 1 })
      .lean()
      .exec();
    return found !== null;
  }

  /** The namespaces of events older than `cutoff`, looking at `limit` such events at most. */
  async namespacesWithEventsBefore(cutoff: Date, limit: number): Promise<Namespace[]> {
    const old = await this.events
      .find({ at: { $lt: cutoff } })
      .limit(limit)
      .select({ tenantKind: 1, tenant: 1, branch: 1 })
      .lean<StoredNamespace[]>()
      .exec();
    return [
      ...new Map(old.map((doc) => [namespaceKey(namespaceOf(doc)), namespaceOf(doc)])).values(),
    ];
  }

  /** Deletes a namespace's events older than `cutoff` numbered below `seq`. */
  async deleteOlderThan(namespace: Namespace, cutoff: Date, seq: number): Promise<void> {
    await this.events
      .deleteMany({ ...namespaceFilter(namespace), at: { $lt: cutoff }, seq: { $lt: seq } })
      .exec();
  }

  /** Deletes a tenant's events in every branch. */
  async deleteTenant(tenant: Tenant): Promise<void> {
    await this.events.deleteMany(tenantFilter(tenant)).exec();
  }
}
