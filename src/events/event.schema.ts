import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import { NAMESPACE_INDEX_KEYS, NamespacedDocument } from '../common/tenancy/namespace';
import type { ItemPrior } from './item-images';

export const EVENT_TYPES = ['created', 'updated', 'deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/**
 * The types a live query (a feed filtered by an item filter) sends: an item change seen from the
 * filter — one that starts to match is `entered`, one that stops matching is `left`.
 */
export const LIVE_EVENT_TYPES = ['created', 'updated', 'entered', 'left', 'deleted'] as const;
export type LiveEventType = (typeof LIVE_EVENT_TYPES)[number];
export const EVENT_RESOURCES = ['item', 'project', 'profile', 'collection', 'file'] as const;
export type EventResource = (typeof EVENT_RESOURCES)[number];

export const EVENT_ACTOR_KINDS = ['root', 'sub', 'team', 'operator', 'system'] as const;

/**
 * Who made a change: the principal kind and its identity (subject, accountId, team id), or the
 * service itself (`system`, with the work that did it: `expiry`).
 */
export interface EventActor {
  kind: (typeof EVENT_ACTOR_KINDS)[number];
  id: string;
}

/**
 * One acknowledged change in a namespace's feed. `seq` numbers the changes of one namespace
 * (tenant kind, tenant, branch) 1, 2, 3, … under a unique index: each is an insert of the next
 * number, so events become visible in their order and a reader that has seen n never misses a
 * later event with a smaller number.
 */
// `collection` is a field of the event (the data collection), read and written only through
// queries and lean documents, never as a document's `collection` property: the warning is moot.
@Schema({ collection: 'events', versionKey: false, suppressReservedKeysWarning: true })
export class EventDocument extends NamespacedDocument {
  _id!: Types.ObjectId;

  @Prop({ required: true })
  seq!: number;

  @Prop({ type: String, required: true, enum: EVENT_TYPES })
  type!: EventType;

  @Prop({ type: String, required: true, enum: EVENT_RESOURCES })
  resource!: EventResource;

  /** The data collection, for item and collection events. */
  @Prop({ type: String })
  collection?: string;

  /** The item's `_id`, the project's or profile's id, or the collection's name. */
  @Prop({ required: true })
  key!: string;

  @Prop({ type: Date, required: true })
  at!: Date;

  @Prop({ type: MongooseSchema.Types.Mixed, required: true })
  actor!: EventActor;

  /**
   * Whose it is, for sub keys' visibility: an item's owner value (its owner field at the write),
   * a profile's id. Null when the change has no owner within the namespace.
   */
  @Prop({ type: String, default: null })
  owner!: string | null;

  /** The resource after the change (created, updated); null for deletions. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: null })
  data!: Record<string, unknown> | null;

  /**
   * Item updates and deletions: what live queries need of the item as it was (item-images.ts):
   * the earlier values of the fields an update changed, or the whole deleted item.
   */
  @Prop({ type: MongooseSchema.Types.Mixed })
  prior?: ItemPrior;

  /** An item update that changed its owner: the owner value before (a sub key's `left`). */
  @Prop({ type: String })
  formerOwner?: string | null;

  /**
   * The intent (event_intents) of the write that appended it: the reconciler appends nothing
   * for an intent whose events are in (a writer that died after appending, before closing it).
   */
  @Prop({ type: String })
  intent?: string;
}

export const EventSchema = SchemaFactory.createForClass(EventDocument);
// The order of a namespace's feed, and what makes each number taken once.
EventSchema.index({ ...NAMESPACE_INDEX_KEYS, seq: 1 }, { unique: true, name: 'namespace_seq' });
// Retention deletes by age.
EventSchema.index({ at: 1 }, { name: 'at' });
