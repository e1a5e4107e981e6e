import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { PlanSchema, PlanSubdocument } from '../profile/profile.schema';

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
  /** The plans the team holds: the same entries as a user's (PUT /admin/teams/{id}/plans). */
  @Prop({ type: [PlanSchema], default: [] })
  plans!: PlanSubdocument[];

  createdAt!: Date;
}

export const TeamSchema = SchemaFactory.createForClass(TeamDocument);
