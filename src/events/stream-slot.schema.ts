import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * One open event stream or waiting long poll of an API key: a place below the key's limit
 * (`streamsPerKey`, EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY) under a unique index, so that the
 * limit holds over every instance together (common/mongo/slots). Held under a lease that its
 * instance renews while the stream is open: a slot whose lease ran out (its instance died) is
 * free to the next claim of the key.
 */
@Schema({ collection: 'event_stream_slots', versionKey: false })
export class StreamSlotDocument {
  /** A fresh id per claim, never reused: a delete by `_id` can only remove that claim. */
  _id!: Types.ObjectId;

  /** The API key's id (`credentialIdOf`). */
  @Prop({ type: String, required: true })
  key!: string;

  @Prop({ type: Number, required: true })
  slot!: number;

  /** Free to another claim after this; renewed every third of EVENTS_STREAM_LEASE_MS. */
  @Prop({ type: Date, required: true })
  leaseUntil!: Date;
}

export const StreamSlotSchema = SchemaFactory.createForClass(StreamSlotDocument);
// At most one holder per place: with places below the limit it holds under any concurrency.
StreamSlotSchema.index({ key: 1, slot: 1 }, { unique: true, name: 'key_slot' });
