import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * One tenant's usage on one UTC day as one flush of one instance wrote it; a day's usage is the
 * sum of its flush rows. `_id` is `<instance>-<flush sequence>-<row of the flush>`, fixed when
 * the flush is taken from the counters: a flush sent again after an error or a timeout inserts
 * the same ids, and `_id` uniqueness (atomic on MongoDB and FerretDB alike) refuses whatever the
 * first send wrote, so nothing is counted twice. Never updated: `$inc` by two instances at once
 * loses increments on FerretDB. No TTL index: UsageSweeper deletes days past retention.
 */
@Schema({ collection: 'usage_flushes', versionKey: false })
export class UsageFlushDocument {
  @Prop({ type: String, required: true })
  _id!: string;

  /** `<day>/<tenant kind>/<tenant id>` (rowKeyOf): the admin list's order and cursor. */
  @Prop({ type: String, required: true })
  row!: string;

  /** The UTC day, YYYY-MM-DD. */
  @Prop({ type: String, required: true })
  day!: string;

  @Prop({ type: String, required: true })
  tenantKind!: string;

  @Prop({ type: String, required: true })
  tenant!: string;

  @Prop({ type: Number, required: true }) read!: number;
  @Prop({ type: Number, required: true }) write!: number;
  @Prop({ type: Number, required: true }) stream!: number;
  @Prop({ type: Number, required: true }) export!: number;
  @Prop({ type: Number, required: true }) import!: number;
  @Prop({ type: Number, required: true }) streamMs!: number;
  @Prop({ type: Number, required: true }) bytesIn!: number;
  @Prop({ type: Number, required: true }) bytesOut!: number;
  @Prop({ type: Number, required: true }) webhookEvents!: number;

  /** When the flush was taken. */
  @Prop({ type: Date, required: true })
  flushedAt!: Date;
}

export const UsageFlushSchema = SchemaFactory.createForClass(UsageFlushDocument);
// A tenant's days (GET /me/usage), and the admin list by row within a range of days.
UsageFlushSchema.index({ tenantKind: 1, tenant: 1, day: 1 });
UsageFlushSchema.index({ row: 1 });
UsageFlushSchema.index({ day: 1 });
