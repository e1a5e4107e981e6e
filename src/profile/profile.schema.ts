import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { Schema as MongooseSchema, type Types } from 'mongoose';
import type { SettingsValue } from './profile.types';

/** A plan entry, as users' root profiles and teams hold them (the same shape for both). */
@Schema({ _id: false, versionKey: false })
export class PlanSubdocument {
  @Prop({ required: true })
  planName!: string;

  @Prop({ required: true })
  since!: Date;

  @Prop({ required: true })
  until!: Date;

  @Prop({ type: MongooseSchema.Types.Mixed, default: {} })
  metadata!: Record<string, SettingsValue>;
}
export const PlanSchema = SchemaFactory.createForClass(PlanSubdocument);

/**
 * One document per profile. Root profiles: accountId = clientId = branch = ''. Sub profiles are
 * per (subject, branch, clientId, accountId).
 */
@Schema({ collection: 'profiles', versionKey: false, timestamps: true, minimize: false })
export class ProfileDocument {
  _id!: Types.ObjectId;

  @Prop({ required: true })
  subject!: string;

  @Prop({ default: '' })
  accountId!: string;

  @Prop({ default: '' })
  clientId!: string;

  @Prop({ default: '' })
  branch!: string;

  @Prop({ type: [PlanSchema], default: [] })
  plans!: PlanSubdocument[];

  @Prop({ default: '' })
  avatar!: string;

  @Prop({ default: '' })
  email!: string;

  @Prop({ type: MongooseSchema.Types.Mixed, default: {} })
  settings!: Record<string, SettingsValue>;

  @Prop({ type: MongooseSchema.Types.Mixed, default: {} })
  metadata!: Record<string, string>;

  @Prop({ type: [String], default: [] })
  groups!: string[];

  /**
   * Bumped by every write of the profile, in the same update; PUT /profile writes only if it is
   * unchanged since its read (optimistic concurrency; a counter, unlike updatedAt, cannot
   * repeat), and with the id it makes the profile's ETag. Profiles written before it existed
   * lack it: they count as 0.
   */
  @Prop({ default: 0 })
  revision!: number;

  createdAt!: Date;
  updatedAt!: Date;
}

export const ProfileSchema = SchemaFactory.createForClass(ProfileDocument);
// Identity of a profile and the lookup of every targeted operation: the root profile is
// (subject, '', '', ''), a sub profile (subject, branch, clientId, accountId). Unique, so two
// concurrent POST /profile for the same account create one profile (no check-then-insert).
ProfileSchema.index({ subject: 1, branch: 1, clientId: 1, accountId: 1 }, { unique: true });
// GET /profile/{accountId} without clientId: the sub profiles of a subject in a branch with this
// accountId (more than one, under different OAuth clients, is a 400).
ProfileSchema.index({ subject: 1, branch: 1, accountId: 1 });

/** The registry of users (root subjects); a unique email index makes duplicate users a 409. */
@Schema({
  collection: 'users',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
})
export class UserDocument {
  /** The subject. */
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ required: true })
  email!: string;

  createdAt!: Date;
}

export const UserSchema = SchemaFactory.createForClass(UserDocument);
// Serves the duplicate-email rule of POST /admin/users.
UserSchema.index({ email: 1 }, { unique: true });
