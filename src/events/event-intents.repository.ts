import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import {
  namespaceFilter,
  namespaceOf,
  tenantFilter,
  type Namespace,
  type Tenant,
} from '../common/tenancy/namespace';
import { EventIntentDocument, type PlannedChange } from './event-intent.schema';
import type { EventActor } from './event.schema';
import type { ChangeScope } from './event-scope';

/** An intent about to be inserted: the changes a write in `scope` plans. */
export interface NewIntent {
  id: Types.ObjectId;
  scope: ChangeScope;
  changes: PlannedChange[];
  createdAt: Date;
}

/** A stored intent: the changes a write in `namespace` by `actor` planned. */
export interface StoredIntent {
  id: Types.ObjectId;
  namespace: Namespace;
  actor: EventActor;
  changes: PlannedChange[];
}

function toStoredIntent(doc: EventIntentDocument): StoredIntent {
  return { id: doc._id, namespace: namespaceOf(doc), actor: doc.actor, changes: doc.changes };
}

/** The `event_intents` collection: writes under way, recorded before they happen. */
@Injectable()
export class EventIntentsRepository {
  constructor(
    @InjectModel(EventIntentDocument.name) private readonly intents: Model<EventIntentDocument>,
  ) {}

  newId(): Types.ObjectId {
    return new Types.ObjectId();
  }

  /**
   * Inserts intents in one unordered command, through the driver's collection: this runs on
   * every write, and a model's casting and hooks cost more CPU than the insert itself (bench:
   * change feed comparison).
   */
  async insertMany(intents: NewIntent[]): Promise<void> {
    await this.intents.collection.insertMany(
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

  async deleteMany(ids: Types.ObjectId[]): Promise<void> {
    await this.intents.collection.deleteMany({ _id: { $in: ids } });
  }

  async deleteOne(id: Types.ObjectId): Promise<void> {
    await this.intents.deleteOne({ _id: id }).exec();
  }

  /** The oldest intents created before `before`, at most `limit`. */
  async findCreatedBefore(before: Date, limit: number): Promise<StoredIntent[]> {
    const docs = await this.intents
      .find({ createdAt: { $lt: before } })
      .sort({ createdAt: 1 })
      .limit(limit)
      .lean<EventIntentDocument[]>()
      .exec();
    return docs.map(toStoredIntent);
  }

  /** Deletes a tenant's intents in every branch. */
  async deleteTenant(tenant: Tenant): Promise<void> {
    await this.intents.deleteMany(tenantFilter(tenant)).exec();
  }
}
