import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { TENANT_KINDS, type TenantKind } from '../common/tenancy/namespace';
import type { ErasureStatus } from '../profile';

/**
 * One account or team erasure. It names its target only while it runs: when it is done the
 * target goes, and what remains (a digest, counts and times) names nobody.
 */
@Schema({ collection: 'erasures', versionKey: false })
export class ErasureDocument {
  _id!: Types.ObjectId;

  @Prop({ type: String, required: true, enum: TENANT_KINDS })
  kind!: TenantKind;

  /** The subject or team id; removed when the erasure is done. */
  @Prop({ type: String })
  target?: string;

  /** SHA-256 of kind and target: a repeated request finds its erasure, also once it is done. */
  @Prop({ required: true })
  targetDigest!: string;

  /**
   * `targetDigest` while running, `done:<id>` afterwards. Unique: of concurrent requests to erase
   * one account exactly one inserts a running erasure (an insert, atomic on every database).
   */
  @Prop({ required: true })
  activeKey!: string;

  @Prop({ type: String, required: true, enum: ['running', 'done'] })
  status!: ErasureStatus;

  /** The steps finished, in order. */
  @Prop({ type: [String], default: [] })
  stepsDone!: string[];

  @Prop({ type: Number, default: 0 })
  collectionsDropped!: number;

  /** Until when the instance working on it holds it; after that any instance takes it over. */
  @Prop({ type: Date, required: true })
  leaseUntil!: Date;

  /** How many times it was started or taken over (more than 1: it was resumed). */
  @Prop({ type: Number, default: 1 })
  runs!: number;

  @Prop({ type: Date, required: true })
  requestedAt!: Date;

  @Prop({ type: Date })
  finishedAt?: Date;
}

export const ErasureSchema = SchemaFactory.createForClass(ErasureDocument);
ErasureSchema.index({ activeKey: 1 }, { unique: true, name: 'active_key' });
ErasureSchema.index({ targetDigest: 1, requestedAt: -1 }, { name: 'target_digest' });
// The runner's question: which running erasures have no live holder.
ErasureSchema.index({ status: 1, leaseUntil: 1 }, { name: 'status_lease' });
