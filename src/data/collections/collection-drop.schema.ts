import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * The tombstone of a dropped collection, written before its registry entry goes. While it lasts
 * (COLLECTION_DROP_GRACE_MS) every instance drops the native collection again, so a write that
 * looked the entry up before the drop and lands after it cannot leave a collection that no entry
 * names. It holds no tenant or collection name: after an account's erasure nothing names the
 * account, tombstones included.
 */
@Schema({ collection: 'data_collection_drops', versionKey: false })
export class CollectionDropDocument {
  /** The `_id` of the registry entry that was dropped (a moved collection's source: a new id). */
  _id!: Types.ObjectId;

  /** The native collection (`d_<registry id>`). */
  @Prop({ required: true })
  physical!: string;

  /** Where it lived (the registry entry's `cluster` and `database`; absent: the main database). */
  @Prop({ type: String })
  cluster?: string;

  @Prop({ type: String })
  database?: string;

  @Prop({ type: Date, required: true })
  droppedAt!: Date;

  /**
   * The source of a moved collection, not a dropped one: its registry entry lives on (at the
   * new location), and so do its index slots.
   */
  @Prop({ type: Boolean })
  movedAway?: boolean;
}

export const CollectionDropSchema = SchemaFactory.createForClass(CollectionDropDocument);
