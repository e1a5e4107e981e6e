import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

export type TeamRole = 'admin' | 'member';
export const TEAM_ROLES: readonly TeamRole[] = ['admin', 'member'];

/** A user's membership of a team: its root keys may act for the team (X-Team). */
@Schema({
  collection: 'team_members',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
})
export class TeamMembershipDocument {
  _id!: Types.ObjectId;

  @Prop({ required: true })
  teamId!: string;

  /** The member's subject. */
  @Prop({ required: true })
  subject!: string;

  /** `admin` may also manage the team's keys. */
  @Prop({ type: String, required: true, enum: TEAM_ROLES })
  role!: TeamRole;

  createdAt!: Date;
}

export const TeamMembershipSchema = SchemaFactory.createForClass(TeamMembershipDocument);
// One membership per user and team; serves the X-Team check of every request that sends it.
TeamMembershipSchema.index({ teamId: 1, subject: 1 }, { unique: true, name: 'team_subject' });
// GET /teams and erasures of a user.
TeamMembershipSchema.index({ subject: 1 }, { name: 'subject' });
