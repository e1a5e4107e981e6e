import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import {
  NAMESPACE_INDEX_KEYS,
  NamespacedDocument,
  TENANT_KINDS,
  type TenantKind,
} from '../common/tenancy/namespace';
import { EVENT_TYPES, type EventType } from '../events/event.schema';

/** An endpoint that receives a namespace's events (docs/events.md, "Webhooks"). */
@Schema({ collection: 'webhooks', versionKey: false, suppressReservedKeysWarning: true })
export class WebhookDocument extends NamespacedDocument {
  _id!: Types.ObjectId;

  @Prop({ required: true })
  url!: string;

  @Prop({ type: [String], enum: EVENT_TYPES, required: true })
  events!: EventType[];

  /** Only the events of this data collection. */
  @Prop({ type: String })
  collection?: string;

  /** `whsec_<base64>`: the HMAC key of the signatures. */
  @Prop({ required: true })
  secret!: string;

  /** The newest event of the namespace that has its deliveries (or needs none). */
  @Prop({ type: Number, required: true })
  cursor!: number;

  /** Since when every attempt failed (null: the last one succeeded, or none was made). */
  @Prop({ type: Date, default: null })
  failingSince!: Date | null;

  /** Set after a day of failures: no deliveries are made any more. */
  @Prop({ type: Date, default: null })
  disabledAt!: Date | null;

  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const WebhookSchema = SchemaFactory.createForClass(WebhookDocument);

/** A webhook as the repository returns it: `id` is the ObjectId's hex. */
export type Webhook = Omit<WebhookDocument, '_id'> & { id: string };
WebhookSchema.index({ ...NAMESPACE_INDEX_KEYS, createdAt: 1 }, { name: 'namespace' });

export interface DeliveryAttempt {
  at: Date;
  /** The endpoint's HTTP status; absent when it could not be reached. */
  status?: number;
  error?: string;
  durationMs: number;
}

/** One event for one webhook: delivered once, retried until it is or its window ends. */
@Schema({ collection: 'webhook_deliveries', versionKey: false })
export class DeliveryDocument {
  /** `<webhook id>:<event id>`: an event gets one delivery per webhook, however often fanned out. */
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ required: true })
  webhookId!: string;

  /** Whose (erasure deletes by tenant; a delivery needs no branch). */
  @Prop({ type: String, required: true, enum: TENANT_KINDS })
  tenantKind!: TenantKind;

  @Prop({ required: true })
  tenant!: string;

  @Prop({ required: true })
  eventId!: string;

  /** The body: the event as GET /events answers it. */
  @Prop({ required: true })
  payload!: string;

  @Prop({ type: String, required: true, enum: ['pending', 'delivered', 'failed'] })
  status!: 'pending' | 'delivered' | 'failed';

  @Prop({ type: [MongooseSchema.Types.Mixed], default: [] })
  attempts!: DeliveryAttempt[];

  @Prop({ type: Date, required: true })
  nextAttemptAt!: Date;

  /** While an instance sends it. */
  @Prop({ type: Date, required: true })
  leaseUntil!: Date;

  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const DeliverySchema = SchemaFactory.createForClass(DeliveryDocument);

/** A delivery as the repository returns it: `id` is `<webhook id>:<event id>`. */
export type Delivery = Omit<DeliveryDocument, '_id'> & { id: string };
// The sender's question: which pending deliveries are due.
DeliverySchema.index({ status: 1, nextAttemptAt: 1 }, { name: 'due' });
// GET /webhooks/{id}/deliveries, newest first.
DeliverySchema.index({ webhookId: 1, createdAt: -1 }, { name: 'webhook' });

/**
 * Who sends a delivery's next attempt: `_id` is `<delivery>:<attempt number>:<lease window>`, so
 * of the instances that find the delivery due at once exactly one inserts it (a unique `_id`,
 * atomic on every database — a filtered update is not, on FerretDB). A claim of an instance that
 * died blocks nothing once its lease window has passed.
 */
@Schema({ collection: 'webhook_attempt_claims', versionKey: false })
export class AttemptClaimDocument {
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const AttemptClaimSchema = SchemaFactory.createForClass(AttemptClaimDocument);
AttemptClaimSchema.index({ createdAt: 1 }, { name: 'created_at' });
