import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/**
 * One place in a collection's index quota, held by one index name. Native index listings cannot
 * make a quota exact (every concurrent creator sees the same count and builds), so an index is
 * built only after its name has claimed a slot below MAX_INDEXES under a unique index — the
 * mechanism that keeps the collection quota exact (see CollectionRegistryDocument.slot).
 */
@Schema({
  collection: 'data_index_slots',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
})
export class IndexSlotDocument {
  _id!: Types.ObjectId;

  /** The physical collection (`d_<registry id>`). */
  @Prop({ required: true })
  physical!: string;

  /** The index name the slot is held for. */
  @Prop({ required: true })
  name!: string;

  @Prop({ required: true })
  slot!: number;

  createdAt!: Date;
}

export const IndexSlotSchema = SchemaFactory.createForClass(IndexSlotDocument);
// At most one holder per place: with places 0..MAX_INDEXES-1 the quota holds under any concurrency.
IndexSlotSchema.index({ physical: 1, slot: 1 }, { unique: true });
// One place per index name; also serves the reads of a collection's slots.
IndexSlotSchema.index({ physical: 1, name: 1 }, { unique: true });
