import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema } from 'mongoose';
import type { Plan } from '../profile';

/** A plan the team holds: the same shape as a user's (PUT /admin/teams/{id}/plans). */
@Schema({ _id: false, versionKey: false })
export class TeamPlanSubdocument {
  @Prop({ required: true })
  planName!: string;

  @Prop({ required: true })
  since!: Date;

  @Prop({ required: true })
  until!: Date;

  @Prop({ type: MongooseSchema.Types.Mixed, default: {} })
  metadata!: Plan['metadata'];
}
const TeamPlanSchema = SchemaFactory.createForClass(TeamPlanSubdocument);

@Schema({
  collection: 'teams',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
  minimize: false,
})
export class TeamDocument {
  /** The team id (a UUID), also the tenant of the team's projects and data. */
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ required: true })
  name!: string;

  /** The plans the team holds, as a user's root profile holds its own (docs/plans.md). */
  @Prop({ type: [TeamPlanSchema], default: [] })
  plans!: TeamPlanSubdocument[];

  createdAt!: Date;
}

export const TeamSchema = SchemaFactory.createForClass(TeamDocument);
