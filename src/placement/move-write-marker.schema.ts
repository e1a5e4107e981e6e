import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * A write under way to something a tenant move is copying (a collection, or the tenant's change
 * feed), written before the write reads where that is and removed when the write ends. A move
 * that pauses those writes waits until none is left, so no write it let through can land on the
 * source after its last comparison. Its instance renews it (`aliveAt`) every quarter of
 * COLLECTION_DROP_GRACE_MS for as long as the write is under way, however long that is; a marker
 * not renewed for COLLECTION_DROP_GRACE_MS (its instance died) is ignored.
 */
@Schema({ collection: 'move_writes', versionKey: false })
export class MoveWriteMarkerDocument {
  _id!: Types.ObjectId;

  /** What is written to: a registry entry's id, or `feed:<tenant database>`. */
  @Prop({ type: String, required: true })
  target!: string;

  @Prop({ type: Date, required: true })
  startedAt!: Date;

  /** When its instance last said the write is still under way (absent: written before renewals). */
  @Prop({ type: Date })
  aliveAt?: Date;
}

export const MoveWriteMarkerSchema = SchemaFactory.createForClass(MoveWriteMarkerDocument);
// The pausing move's question: are writes to this target under way?
MoveWriteMarkerSchema.index({ target: 1, startedAt: 1 }, { name: 'target_started' });
MoveWriteMarkerSchema.index({ target: 1, aliveAt: 1 }, { name: 'target_alive' });
