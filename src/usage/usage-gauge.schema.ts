import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { USAGE_GAUGES, type UsageGauge } from './usage-gauges';

/**
 * One gauge of one tenant on one UTC day, as the day's snapshot measured it. `_id` is
 * `<day>/<tenant kind>/<tenant id>/<gauge>` (gaugeIdOf): fixed by what it measures, so of two
 * instances measuring the same tenant and day (a snapshot taken over after its lease ran out)
 * the first insert wins and the other is refused as a duplicate — exactly one value per tenant,
 * day and gauge, on FerretDB too. Never updated; deleted by UsageSweeper with the day.
 */
@Schema({ collection: 'usage_gauges', versionKey: false })
export class UsageGaugeDocument {
  @Prop({ type: String, required: true })
  _id!: string;

  /** `<day>/<tenant kind>/<tenant id>` (rowKeyOf), as in usage_flushes: the admin list's order. */
  @Prop({ type: String, required: true })
  row!: string;

  @Prop({ type: String, required: true })
  day!: string;

  @Prop({ type: String, required: true })
  tenantKind!: string;

  @Prop({ type: String, required: true })
  tenant!: string;

  @Prop({ type: String, required: true, enum: USAGE_GAUGES })
  gauge!: UsageGauge;

  @Prop({ type: Number, required: true })
  value!: number;

  /** When the value was measured. */
  @Prop({ type: Date, required: true })
  measuredAt!: Date;
}

export const UsageGaugeSchema = SchemaFactory.createForClass(UsageGaugeDocument);
UsageGaugeSchema.index({ tenantKind: 1, tenant: 1, day: 1 });
UsageGaugeSchema.index({ row: 1 });
UsageGaugeSchema.index({ day: 1 });
