import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import { NamespacedDocument } from '../common/tenancy/namespace';
import type { EventActor, EventResource, EventType } from './event.schema';

/** One change a write is about to make, as far as it is known before the write. */
export interface PlannedChange {
  resource: EventResource;
  type: EventType;
  collection?: string;
  key: string;
  /** Items: the owner field of the write, to read the owner back after a crash. */
  ownerField?: string;
}

/**
 * A write that is about to happen, recorded before it: if the process dies between the write and
 * its events, the reconciler finds the intent, looks at what the database holds, and records the
 * events of whatever did happen. Deleted once the events are recorded (or the write refused).
 */
@Schema({ collection: 'event_intents', versionKey: false })
export class EventIntentDocument extends NamespacedDocument {
  _id!: Types.ObjectId;

  @Prop({ type: MongooseSchema.Types.Mixed, required: true })
  actor!: EventActor;

  @Prop({ type: [MongooseSchema.Types.Mixed], required: true })
  changes!: PlannedChange[];

  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const EventIntentSchema = SchemaFactory.createForClass(EventIntentDocument);
// The reconciler looks at the oldest intents first.
EventIntentSchema.index({ createdAt: 1 }, { name: 'created_at' });
