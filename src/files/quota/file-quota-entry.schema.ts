import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { TENANT_KINDS, type TenantKind } from '../../common/tenancy/namespace';

/** How an upload ended: its bytes counted as stored, or given back. */
export type UploadOutcome = 'stored' | 'abandoned';

/**
 * One change of a tenant's file bytes: entry `seq` holds the bytes counted after it (`used`).
 * The entries of a tenant form a chain — entry n + 1 is written from entry n, and its `_id`
 * (`<kind>|<tenant>|<seq>`) makes the database refuse a second entry n + 1 — so two changes can
 * never both start from the same count, on any instance. Each entry names the step it records
 * (`ref`, unique), so a step repeated after a crash is recorded once.
 */
@Schema({ collection: 'file_quota_ledger', versionKey: false })
export class FileQuotaEntryDocument {
  @Prop({ type: String, required: true })
  _id!: string;

  @Prop({ type: String, required: true, enum: TENANT_KINDS })
  tenantKind!: TenantKind;

  @Prop({ type: String, required: true })
  tenant!: string;

  @Prop({ type: Number, required: true })
  seq!: number;

  /** Bytes counted for the tenant after this entry. */
  @Prop({ type: Number, required: true })
  used!: number;

  @Prop({ type: Number, required: true })
  delta!: number;

  /** `<file id>:<step>` (reserve, grow:<n>, end, delete, undo:<n>). */
  @Prop({ type: String, required: true })
  ref!: string;

  /** The file the step belongs to (hex id). */
  @Prop({ type: String, required: true })
  file!: string;

  /** An upload's end: stored or abandoned, with the refs its delta accounts for. */
  @Prop({ type: String })
  outcome?: UploadOutcome;

  @Prop({ type: [String] })
  settles?: string[];

  /** A stored upload's end: its size and SHA-256, so a sweep can finish the record. */
  @Prop({ type: Number })
  size?: number;

  @Prop({ type: String })
  sha256?: string;

  @Prop({ type: Date, required: true })
  at!: Date;

  /** A forgotten file's step kept as its tenant's head (the chain goes on from it). */
  @Prop({ type: Boolean })
  kept?: boolean;
}

export const FileQuotaEntrySchema = SchemaFactory.createForClass(FileQuotaEntryDocument);
FileQuotaEntrySchema.index({ ref: 1 }, { unique: true, name: 'ref' });
// The chain's head: the newest entry of a tenant.
FileQuotaEntrySchema.index({ tenantKind: 1, tenant: 1, seq: -1 }, { name: 'tenant_seq' });
FileQuotaEntrySchema.index({ file: 1 }, { name: 'file' });
