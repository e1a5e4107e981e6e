import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * The snapshot of one UTC day's gauges. `_id` is the day: of the instances that find the
 * snapshot due, the one whose insert is not refused takes it; the others leave it to that one
 * until its lease runs out (it died or stopped), then one takes it over — as an erasure is.
 */
@Schema({ collection: 'usage_snapshots', versionKey: false })
export class UsageSnapshotDocument {
  /** The UTC day, YYYY-MM-DD. */
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ type: String, required: true, enum: ['running', 'done'] })
  status!: 'running' | 'done';

  /** Until when the instance taking it holds it; each tenant measured renews it. */
  @Prop({ type: Date, required: true })
  leaseUntil!: Date;

  /** How many times it was started or taken over (more than 1: it was resumed). */
  @Prop({ type: Number, required: true })
  runs!: number;

  @Prop({ type: Date, required: true })
  startedAt!: Date;

  @Prop({ type: Date })
  finishedAt?: Date;
}

export const UsageSnapshotSchema = SchemaFactory.createForClass(UsageSnapshotDocument);
