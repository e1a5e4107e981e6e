import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import { NAMESPACE_INDEX_KEYS, NamespacedDocument } from '../common/tenancy/namespace';

/**
 * One place in a namespace's webhook limit, held by one webhook. Counting a namespace's webhooks
 * before inserting one cannot keep the limit across instances (every concurrent creator sees the
 * same count and inserts), so a webhook is inserted only after it has claimed a slot below the
 * limit under a unique index: the mechanism of the collection and index quotas
 * (common/mongo/slots).
 */
@Schema({ collection: 'webhook_slots', versionKey: false })
export class WebhookSlotDocument extends NamespacedDocument {
  _id!: Types.ObjectId;

  @Prop({ type: Number, required: true })
  slot!: number;

  /** The webhook's `_id`: claimed before the webhook is inserted under it. */
  @Prop({ type: MongooseSchema.Types.ObjectId, required: true })
  webhook!: Types.ObjectId;

  @Prop({ type: Date, required: true })
  createdAt!: Date;
}

export const WebhookSlotSchema = SchemaFactory.createForClass(WebhookSlotDocument);
// At most one holder per place: with places below the limit it holds under any concurrency.
WebhookSlotSchema.index({ ...NAMESPACE_INDEX_KEYS, slot: 1 }, { unique: true, name: 'slot' });
// One place per webhook (a webhook made before slots existed gets one once); both unique indexes
// start with the namespace, the shard key (docs/deployment.md).
WebhookSlotSchema.index({ ...NAMESPACE_INDEX_KEYS, webhook: 1 }, { unique: true, name: 'webhook' });
