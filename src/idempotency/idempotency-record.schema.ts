import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * One Idempotency-Key of one scope. `_id` is derived from the scope and the key (recordIdOf), so
 * of concurrent first requests exactly one can insert it: `_id` uniqueness is atomic on MongoDB
 * and on FerretDB alike, and it is the only thing exclusion rests on. No TTL index (FerretDB has
 * none): expired records are ignored by reads and deleted by IdempotencySweeper.
 */
@Schema({ collection: 'idempotency_records', versionKey: false })
export class IdempotencyRecordDocument {
  @Prop({ type: String, required: true })
  _id!: string;

  /** `running` while the first request runs; `done` once its response is kept. */
  @Prop({ type: String, required: true, enum: ['running', 'done'] })
  state!: 'running' | 'done';

  /** fingerprintOf the first request: a repeat must match it. */
  @Prop({ type: String, required: true })
  fingerprint!: string;

  /** Names the request that inserted the record; only it completes or releases it. */
  @Prop({ type: String, required: true })
  token!: string;

  /** Running: the end of the lease; done: the end of the replay period. */
  @Prop({ type: Date, required: true, index: true })
  expiresAt!: Date;

  /**
   * Whose record it is (a user or a team; absent for the operator's, and on records written
   * before they were kept beside the tenant): a tenant move takes its records along.
   */
  @Prop({ type: String })
  tenantKind?: string;

  @Prop({ type: String })
  tenant?: string;

  /** The sealed response (sealResponse), once done. */
  @Prop({ type: Buffer })
  response?: Buffer;
}

export const IdempotencyRecordSchema = SchemaFactory.createForClass(IdempotencyRecordDocument);
