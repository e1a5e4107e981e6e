import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { namespaceFilter, tenantFilter, type Tenant } from '../common/tenancy/namespace';
import { EventIntentDocument, type PlannedChange } from './event-intent.schema';
import type { ChangeScope } from './event-scope';

/** An intent about to be inserted: the changes a write in `scope` plans. */
export interface NewIntent {
  id: Types.ObjectId;
  scope: ChangeScope;
  changes: PlannedChange[];
  createdAt: Date;
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
  findCreatedBefore(before: Date, limit: number): Promise<EventIntentDocument[]> {
    return this.intents
      .find({ createdAt: { $lt: before } })
      .sort({ createdAt: 1 })
      .limit(limit)
      .lean<EventIntentDocument[]>()
      .exec();
  }

  /** Deletes a tenant's intents in every branch. */
  async deleteTenant(tenant: Tenant): Promise<void> {
    await this.intents.deleteMany(tenantFilter(tenant)).exec();
  }
}
