import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema } from 'mongoose';
import type { PlanLimits } from './plan-limits';

/** One plan of the catalogue, named by its `_id`. */
@Schema({ collection: 'plans', versionKey: false, minimize: false })
export class PlanDocument {
  /** The plan's name (PLAN_NAME_PATTERN), as users' and teams' entries name it. */
  @Prop({ type: String, required: true })
  _id!: string;

  /** The limits the plan sets; a name left out falls back to the deployment's setting. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} })
  limits!: PlanLimits;

  /** The operator's own data about the plan (price, display name…); the service ignores it. */
  @Prop({ type: MongooseSchema.Types.Mixed, default: {} })
  metadata!: Record<string, unknown>;

  /** 1 when created, +1 with every replacement: the ETag `"plan-<version>"`. */
  @Prop({ required: true })
  version!: number;

  @Prop({ required: true })
  updatedAt!: Date;
}

export const PlanSchema = SchemaFactory.createForClass(PlanDocument);
