import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../../common/mongo/duplicate';
import type { Tenant } from '../../common/tenancy/namespace';
import { FileQuotaEntryDocument, type UploadOutcome } from './file-quota-entry.schema';

/** A recorded step of a tenant's file bytes. */
export type QuotaEntry = Pick<
  FileQuotaEntryDocument,
  'seq' | 'used' | 'delta' | 'ref' | 'file' | 'outcome' | 'settles' | 'size' | 'sha256'
>;

/** A step to record: its ref and file, the change of bytes, and what an upload's end says. */
export interface QuotaStep {
  file: string;
  ref: string;
  delta: number;
  end?: { outcome: UploadOutcome; settles: string[]; size?: number; sha256?: string };
}

const FIELDS = {
  _id: 0,
  seq: 1,
  used: 1,
  delta: 1,
  ref: 1,
  file: 1,
  outcome: 1,
  settles: 1,
  size: 1,
  sha256: 1,
} as const;

/**
 * The bytes each tenant's files take, exact across instances without transactions or counters:
 * a chain of entries per tenant, each written from the one before it under a unique `_id`
 * (FileQuotaEntryDocument). A step reads the head, checks the limit against it, and inserts the
 * next entry; when another instance took that place first, it reads the new head and tries
 * again. Only inserts decide, which MongoDB and FerretDB both decide atomically.
 */
@Injectable()
export class FileQuotaLedger implements OnModuleInit {
  constructor(
    @InjectModel(FileQuotaEntryDocument.name)
    private readonly entries: Model<FileQuotaEntryDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.entries.init();
  }

  /** Bytes counted for the tenant now. */
  async used(tenant: Tenant): Promise<number> {
    return (await this.head(tenant))?.used ?? 0;
  }

  /**
   * Records `step` once. With `limit`, a step that adds bytes is refused ('over') when the count
   * would pass it. A step recorded before (its ref exists: a repeat, or the other side of a
   * race for an upload's end) is not recorded again: the entry that exists is returned.
   */
  async record(tenant: Tenant, step: QuotaStep, limit?: number): Promise<QuotaEntry | 'over'> {
    for (;;) {
      const head = await this.head(tenant);
      const used = (head?.used ?? 0) + step.delta;
      if (limit !== undefined && step.delta > 0 && used > limit) return 'over';
      const seq = (head?.seq ?? 0) + 1;
      const entry = {
        seq,
        used,
        delta: step.delta,
        ref: step.ref,
        file: step.file,
        ...(step.end ?? {}),
      };
      const inserted = await orDuplicate(() =>
        this.entries.create({
          _id: `${tenant.kind}|${tenant.id}|${seq}`,
          tenantKind: tenant.kind,
          tenant: tenant.id,
          at: new Date(),
          ...entry,
        }),
      );
      if (inserted !== DUPLICATE) return entry;
      // Either the place was taken (try the new head) or the step was recorded already.
      const existing = await this.byRef(step.ref);
      if (existing) return existing;
    }
  }

  byRef(ref: string): Promise<QuotaEntry | null> {
    return this.entries.findOne({ ref }, FIELDS).lean<QuotaEntry>().exec();
  }

  /** Every step recorded for a file, oldest first. */
  stepsOf(file: string): Promise<QuotaEntry[]> {
    return this.entries.find({ file }, FIELDS).sort({ seq: 1 }).lean<QuotaEntry[]>().exec();
  }

  /**
   * Forgets a deleted file's steps, but the tenant's head (the chain goes on from it). Only for
   * files whose record is gone: nothing can record a step of theirs again.
   */
  async forgetFile(tenant: Tenant, file: string): Promise<void> {
    const head = await this.head(tenant);
    await this.entries.deleteMany({ file, ...(head ? { seq: { $lt: head.seq } } : {}) }).exec();
    // The head stays, marked, so that the sweep does not find it again.
    if (head?.file === file)
      await this.entries
        .updateOne({ _id: `${tenant.kind}|${tenant.id}|${head.seq}` }, { $set: { kept: true } })
        .exec();
  }

  /**
   * Files whose last step (a delete, or an upload given up) was recorded before `before`: the
   * sweep forgets their steps once their record is gone.
   */
  async finishedBefore(before: Date, limit: number): Promise<{ tenant: Tenant; file: string }[]> {
    const docs = await this.entries
      .find(
        {
          at: { $lt: before },
          kept: { $ne: true },
          $or: [{ ref: { $regex: ':delete$' } }, { outcome: 'abandoned' }],
        },
        { _id: 0, tenantKind: 1, tenant: 1, file: 1 },
      )
      .limit(limit)
      .lean<Pick<FileQuotaEntryDocument, 'tenantKind' | 'tenant' | 'file'>[]>()
      .exec();
    return docs.map((doc) => ({
      tenant: { kind: doc.tenantKind, id: doc.tenant },
      file: doc.file,
    }));
  }

  /** Forgets the tenant's chain (an erasure, once its files are gone). */
  async forgetTenant(tenant: Tenant): Promise<void> {
    await this.entries.deleteMany({ tenantKind: tenant.kind, tenant: tenant.id }).exec();
  }

  private head(tenant: Tenant): Promise<QuotaEntry | null> {
    return this.entries
      .findOne({ tenantKind: tenant.kind, tenant: tenant.id }, FIELDS)
      .sort({ seq: -1 })
      .lean<QuotaEntry>()
      .exec();
  }
}
