import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * The shape of `data_unique_claims`, kept in the database of the collection it guards (the
 * tenant's; UniqueClaimRepository makes its index there). This schema builds the index of the
 * main database's, which holds the claims of collections registered before tenants were placed.
 *
 * A `uniqueField` value taken in one scope of one collection: by the item `itemId`, or by the
 * create that is inserting it. `_id` is derived from (collection, scope, field, value), so two
 * creates of one value insert the same `_id` and the database lets exactly one of them through —
 * atomic on MongoDB and FerretDB alike, with or without an index on the field. The rules (when a
 * claim is stale and may be taken over) are in UniqueValuesService.
 */
@Schema({ collection: 'data_unique_claims', versionKey: false })
export class UniqueClaimDocument {
  /** SHA-256 (hex) of the collection, the scope, the field and the value with its JSON type. */
  @Prop({ type: String, required: true })
  _id!: string;

  /** The physical collection (`d_<registry id>`). */
  @Prop({ required: true })
  physical!: string;

  /** The item created with the value, or being created with it. */
  @Prop({ required: true })
  itemId!: string;

  /** Random per claim: a delete names the claim it means, never a newer one with the same `_id`. */
  @Prop({ required: true })
  token!: string;

  @Prop({ type: Date, required: true })
  claimedAt!: Date;

  /** Set by a delete of the item before it deletes it: once the item is gone, the claim is stale. */
  @Prop()
  releasing?: boolean;
}

export const UniqueClaimSchema = SchemaFactory.createForClass(UniqueClaimDocument);
// Deleting an item gives back the values claimed for it.
UniqueClaimSchema.index({ physical: 1, itemId: 1 }, { name: 'physical_item' });
