import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/** How an identity came to its user: its first token provisioned the user, or the operator linked it. */
export type IdentityOrigin = 'provisioned' | 'linked';

/**
 * One identity of an identity provider — (issuer, subject) — and the user it is. The `_id` is
 * derived from both (identityIdOf), so its uniqueness, atomic even where filtered updates are
 * not re-checked, makes exactly one document per identity: whoever inserts it first decides the
 * user.
 */
@Schema({
  collection: 'identities',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
})
export class IdentityDocument {
  /** identityIdOf(issuer, subject). */
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ type: String, required: true })
  issuer!: string;

  /** The subject claim at the issuer. */
  @Prop({ type: String, required: true })
  subject!: string;

  /** The user (root profile subject) the identity is. */
  @Prop({ type: String, required: true })
  userSubject!: string;

  @Prop({ type: String, required: true, enum: ['provisioned', 'linked'] })
  how!: IdentityOrigin;

  /**
   * A provisioned identity's user, root profile and placement all exist. Until then a request of
   * the identity (on any instance, after a crash too) completes them first.
   */
  @Prop({ type: Boolean, default: false })
  settled!: boolean;

  createdAt!: Date;
}

export const IdentitySchema = SchemaFactory.createForClass(IdentityDocument);
// A user's identities: GET /admin/users/{subject}, linking and erasure.
IdentitySchema.index({ userSubject: 1 });
