import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * A write under way to something a tenant move is copying (a collection, or the tenant's change
 * feed), written before the write reads where that is and removed when the write ends. A move
 * that pauses those writes waits until none is left, so no write it let through can land on the
 * source after its last comparison. A marker whose request died counts for
 * COLLECTION_DROP_GRACE_MS (the longest request) and is ignored after that.
 */
@Schema({ collection: 'move_writes', versionKey: false })
export class MoveWriteMarkerDocument {
  _id!: Types.ObjectId;

  /** What is written to: a registry entry's id, or `feed:<tenant database>`. */
  @Prop({ type: String, required: true })
  target!: string;

  @Prop({ type: Date, required: true })
  startedAt!: Date;
}

export const MoveWriteMarkerSchema = SchemaFactory.createForClass(MoveWriteMarkerDocument);
// The pausing move's question: are writes to this target under way?
MoveWriteMarkerSchema.index({ target: 1, startedAt: 1 }, { name: 'target_started' });
