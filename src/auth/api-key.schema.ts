import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

export type ApiKeyKind = 'root' | 'sub' | 'team' | 'publishable';

@Schema({
  collection: 'api_keys',
  versionKey: false,
  timestamps: { createdAt: true, updatedAt: false },
})
export class ApiKeyDocument {
  _id!: Types.ObjectId;

  /** SHA-256 of the secret; the secret itself is never stored. */
  @Prop({ required: true })
  digest!: string;

  /** First characters of the secret, for people to tell keys apart. */
  @Prop({ required: true })
  prefix!: string;

  @Prop({ default: '' })
  name!: string;

  @Prop({ required: true, enum: ['root', 'sub', 'team', 'publishable'] })
  kind!: ApiKeyKind;

  /** Root user's subject (root and sub keys, and publishable keys a user minted). */
  @Prop({ default: '' })
  subject!: string;

  /** The team of a team key, or of a publishable key a team minted. */
  @Prop({ default: '' })
  teamId!: string;

  @Prop({ default: '' })
  clientId!: string;

  @Prop({ default: '' })
  accountId!: string;

  /** Id of the sub profile a sub key acts as. */
  @Prop({ default: '' })
  profileId!: string;

  /** Branch the key is bound to; null = any branch chosen with X-Branch. */
  @Prop({ type: String, default: null })
  branch!: string | null;

  @Prop({ type: Date, default: null })
  expiresAt!: Date | null;

  /** The scopes the key holds (src/auth/access-grant.ts); null or absent: all of them. */
  @Prop({ type: [String], default: null })
  scopes!: string[] | null;

  /** Collection name or `prefix*` → 'read' | 'write'; null or absent: every collection. */
  @Prop({ type: Object, default: null })
  collections!: Record<string, 'read' | 'write'> | null;

  /** CIDRs requests with the key may come from; null or absent: any address. */
  @Prop({ type: [String], default: null })
  allowedIps!: string[] | null;

  /** A publishable key's browser origins (`scheme://host[:port]`); null for other kinds. */
  @Prop({ type: [String], default: null })
  allowedOrigins!: string[] | null;

  /**
   * When the key was last used, to within API_KEY_LAST_USED_INTERVAL_MS (each instance writes a
   * key's use at most once per interval); null or absent: not used since this was recorded.
   */
  @Prop({ type: Date, default: null })
  lastUsedAt!: Date | null;

  createdAt!: Date;
}

export const ApiKeySchema = SchemaFactory.createForClass(ApiKeyDocument);
// Serves the per-request key lookup (ApiKeyRepository.findByDigest); unique so a digest names one key.
ApiKeySchema.index({ digest: 1 }, { unique: true });
// Serves GET /api-keys and the owner check of DELETE /api-keys/{id} (ApiKeyRepository.listInScope).
ApiKeySchema.index({ subject: 1, createdAt: 1 });
