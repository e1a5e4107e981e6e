import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * A write under way to a collection that a tenant move is copying, written before the write
 * reads the registry entry and removed when the request ends. A move that pauses the
 * collection's writes waits until none is left, so no write it let through can land on the
 * source after its last comparison. A marker whose request died counts for
 * COLLECTION_DROP_GRACE_MS (the longest request) and is ignored after that.
 */
@Schema({ collection: 'data_move_writes', versionKey: false })
export class CollectionWriteMarkerDocument {
  _id!: Types.ObjectId;

  /** The registry entry written to. */
  @Prop({ type: String, required: true })
  entry!: string;

  @Prop({ type: Date, required: true })
  startedAt!: Date;
}

export const CollectionWriteMarkerSchema = SchemaFactory.createForClass(
  CollectionWriteMarkerDocument,
);
// The pausing move's question: are writes to this entry under way?
CollectionWriteMarkerSchema.index({ entry: 1, startedAt: 1 }, { name: 'entry_started' });
