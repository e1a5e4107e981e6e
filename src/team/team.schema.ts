import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

@Schema({
  collection: 'teams',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
})
export class TeamDocument {
  /** The team id (a UUID), also the tenant of the team's projects and data. */
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ required: true })
  name!: string;

  createdAt!: Date;
}

export const TeamSchema = SchemaFactory.createForClass(TeamDocument);
