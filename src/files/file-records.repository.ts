import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import {
  namespaceFilter,
  tenantFilter,
  type Namespace,
  type Tenant,
} from '../common/tenancy/namespace';
import { FileRecordDocument, type FileState } from './file-record.schema';

/** A file as the service works with it. */
export interface FileRecord {
  /** This stored copy's own key (hex `_id`): its bytes and its quota steps go by it. */
  id: string;
  /** The id the API shows, unique within the namespace (kept by an import). */
  fileId: string;
  namespace: Namespace;
  name: string;
  contentType: string;
  size: number;
  sha256: string | null;
  owner: string;
  state: FileState;
  /** Where the bytes are. */
  location: { cluster: string | null; database: string };
  createdAt: Date;
}

/** What GET /files narrows a page to. */
export interface FileListQuery {
  limit: number;
  after?: string;
  namePrefix?: string;
  contentType?: string;
  /** A sub key's owner value: only its own files. */
  owner?: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function toRecord(doc: FileRecordDocument): FileRecord {
  return {
    id: doc._id.toHexString(),
    fileId: doc.fileId,
    namespace: { kind: doc.tenantKind, id: doc.tenant, branch: doc.branch },
    name: doc.name,
    contentType: doc.contentType,
    size: doc.size,
    sha256: doc.sha256,
    owner: doc.owner,
    state: doc.state,
    location: { cluster: doc.cluster, database: doc.database },
    createdAt: doc.createdAt,
  };
}

@Injectable()
export class FileRecordsRepository implements OnModuleInit {
  constructor(
    @InjectModel(FileRecordDocument.name) private readonly files: Model<FileRecordDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.files.init();
  }

  /** Records an upload that begins (state `uploading`). */
  async begin(file: Omit<FileRecord, 'state' | 'sha256' | 'size'>): Promise<void> {
    const now = new Date();
    await this.files.create({
      _id: new Types.ObjectId(file.id),
      fileId: file.fileId,
      ...namespaceFilter(file.namespace),
      name: file.name,
      contentType: file.contentType,
      size: 0,
      sha256: null,
      owner: file.owner,
      state: 'uploading',
      cluster: file.location.cluster,
      database: file.location.database,
      createdAt: file.createdAt ?? now,
      heartbeatAt: now,
    });
  }

  async heartbeat(id: string): Promise<void> {
    await this.files.updateOne({ _id: id }, { $set: { heartbeatAt: new Date() } }).exec();
  }

  /** False when the record is gone (an erasure removed it while the bytes arrived). */
  async markStored(id: string, size: number, sha256: string): Promise<boolean> {
    const result = await this.files
      .updateOne({ _id: id }, { $set: { state: 'stored', size, sha256 } })
      .exec();
    return result.matchedCount === 1;
  }

  async markDeleting(id: string): Promise<void> {
    await this.files
      .updateOne({ _id: id }, { $set: { state: 'deleting', heartbeatAt: new Date() } })
      .exec();
  }

  /** Points a file at where a move copied its bytes. */
  async relocate(id: string, location: FileRecord['location']): Promise<void> {
    await this.files.updateOne({ _id: id }, { $set: location }).exec();
  }

  async remove(id: string): Promise<void> {
    await this.files.deleteOne({ _id: id }).exec();
  }

  /** A stored copy by its own key, in any state. */
  async findByKey(key: string): Promise<FileRecord | null> {
    const doc = await this.files.findById(key).lean<FileRecordDocument>().exec();
    return doc ? toRecord(doc) : null;
  }

  /** The namespace's file `fileId` in any state (an upload or a delete under way too). */
  async findAny(namespace: Namespace, fileId: string): Promise<FileRecord | null> {
    const doc = await this.files
      .findOne({ ...namespaceFilter(namespace), fileId })
      .lean<FileRecordDocument>()
      .exec();
    return doc ? toRecord(doc) : null;
  }

  /** A stored file of the namespace by the id the API shows (and owner, for a sub key). */
  async findStored(
    namespace: Namespace,
    fileId: string,
    owner?: string,
  ): Promise<FileRecord | null> {
    if (!/^[0-9a-f]{24}$/.test(fileId)) return null;
    const doc = await this.files
      .findOne({
        ...namespaceFilter(namespace),
        fileId,
        state: 'stored',
        ...(owner !== undefined ? { owner } : {}),
      })
      .lean<FileRecordDocument>()
      .exec();
    return doc ? toRecord(doc) : null;
  }

  /** A page of the namespace's stored files in id (upload) order, one more to tell if more follow. */
  async list(namespace: Namespace, query: FileListQuery): Promise<FileRecord[]> {
    const docs = await this.files
      .find({
        ...namespaceFilter(namespace),
        state: 'stored',
        ...(query.after !== undefined ? { fileId: { $gt: query.after } } : {}),
        ...(query.namePrefix !== undefined
          ? { name: { $regex: `^${escapeRegExp(query.namePrefix)}` } }
          : {}),
        ...(query.contentType !== undefined ? { contentType: query.contentType } : {}),
        ...(query.owner !== undefined ? { owner: query.owner } : {}),
      })
      .sort({ fileId: 1 })
      .limit(query.limit + 1)
      .lean<FileRecordDocument[]>()
      .exec();
    return docs.map(toRecord);
  }

  /** Uploads and deletions in `state` whose mark is older than `before`, a batch at a time. */
  async stale(state: 'uploading' | 'deleting', before: Date, limit: number): Promise<FileRecord[]> {
    const docs = await this.files
      .find({ state, heartbeatAt: { $lt: before } })
      .limit(limit)
      .lean<FileRecordDocument[]>()
      .exec();
    return docs.map(toRecord);
  }

  /** Every file of a tenant in every branch and state, a batch after `after` (erasure, moves). */
  async ofTenant(tenant: Tenant, limit: number, after?: string): Promise<FileRecord[]> {
    const docs = await this.files
      .find({
        ...tenantFilter(tenant),
        ...(after !== undefined ? { _id: { $gt: new Types.ObjectId(after) } } : {}),
      })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<FileRecordDocument[]>()
      .exec();
    return docs.map(toRecord);
  }

  /** How many stored files a namespace (an owner's, for a sub key) has, and their bytes. */
  async storedTotals(
    namespace: Namespace,
    owner?: string,
  ): Promise<{ count: number; bytes: number }> {
    const sizes = this.files
      .find(
        {
          ...namespaceFilter(namespace),
          state: 'stored',
          ...(owner !== undefined ? { owner } : {}),
        },
        { _id: 0, size: 1 },
      )
      .lean<{ size: number }>()
      .cursor();
    const totals = { count: 0, bytes: 0 };
    for await (const { size } of sizes) {
      totals.count += 1;
      totals.bytes += size;
    }
    return totals;
  }
}
