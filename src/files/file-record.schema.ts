import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { NAMESPACE_INDEX_KEYS, NamespacedDocument } from '../common/tenancy/namespace';

/**
 * A file's life: `uploading` while its bytes arrive (seen by nobody), `stored` once they are all
 * in and counted, `deleting` from the moment a delete begins until its bytes are gone.
 */
export const FILE_STATES = ['uploading', 'stored', 'deleting'] as const;
export type FileState = (typeof FILE_STATES)[number];

/**
 * One file of a namespace: what GET /files/{id} answers, and where its bytes are. Its `fileId`
 * (the id the API shows) is unique within the namespace — an import keeps it, so one file can be
 * restored into several namespaces — while `_id` is this stored copy's own, the key of its
 * bytes and of its quota steps. The bytes are a GridFS file (the record's `_id`) in the `files` bucket of the tenant's database on its cluster
 * (`cluster` null: the main database, for tenants never placed). The record lives in the main
 * database beside the collection registry, so lists, quotas and links never ask a tenant's
 * cluster, and a move changes where the bytes are by rewriting `cluster`.
 */
@Schema({ collection: 'file_records', versionKey: false })
export class FileRecordDocument extends NamespacedDocument {
  _id!: Types.ObjectId;

  /** The id the API shows: 24 hex digits, the `_id` of the upload that made it first. */
  @Prop({ type: String, required: true })
  fileId!: string;

  @Prop({ type: String, required: true })
  name!: string;

  @Prop({ type: String, required: true })
  contentType!: string;

  /** Bytes stored; 0 until the upload is complete. */
  @Prop({ type: Number, required: true })
  size!: number;

  /** Hex SHA-256 of the bytes (the strong ETag); null until the upload is complete. */
  @Prop({ type: String, default: null })
  sha256!: string | null;

  /** The uploader's owner value (subject, accountId or team id): sub keys see their own. */
  @Prop({ type: String, required: true })
  owner!: string;

  @Prop({ type: String, required: true, enum: FILE_STATES })
  state!: FileState;

  /** The cluster holding the bytes (a DATA_CLUSTERS name); null: the main database. */
  @Prop({ type: String, default: null })
  cluster!: string | null;

  /** The database holding the bytes on that cluster. */
  @Prop({ type: String, required: true })
  database!: string;

  @Prop({ type: Date, required: true })
  createdAt!: Date;

  /**
   * Renewed while the upload runs; set when a delete begins. A sweep finishes what stopped: an
   * upload or a delete whose mark is older than FILE_UPLOAD_STALE_MS.
   */
  @Prop({ type: Date, required: true })
  heartbeatAt!: Date;
}

export const FileRecordSchema = SchemaFactory.createForClass(FileRecordDocument);
// One file per id and namespace; GET /files: a namespace's files in id order (the keyset).
FileRecordSchema.index(
  { ...NAMESPACE_INDEX_KEYS, fileId: 1 },
  { name: 'namespace_file_id', unique: true },
);
// The sweep: uploads and deletions that stopped.
FileRecordSchema.index({ state: 1, heartbeatAt: 1 }, { name: 'state_heartbeat' });
