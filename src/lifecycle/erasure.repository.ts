import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type { Tenant } from '../common/tenancy/namespace';
import { DUPLICATE, orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { isObjectIdHex } from '../common/mongo/object-id';
import type { Erasure } from '../profile';
import { ErasureDocument } from './erasure.schema';

/** An erasure as the service works on it: the answer's fields, and its target while it runs. */
export interface ErasureRecord extends Erasure {
  /** The subject or team id; absent once the erasure is done. */
  target?: string;
}

/** What an erasure names its target by: SHA-256 of its kind and id. */
export function digestOf(tenant: Tenant): string {
  return createHash('sha256').update(`erasure\u0000${tenant.kind}\u0000${tenant.id}`).digest('hex');
}

function toRecord(doc: ErasureDocument): ErasureRecord {
  return {
    id: doc._id.toHexString(),
    kind: doc.kind,
    ...(doc.target !== undefined ? { target: doc.target } : {}),
    status: doc.status,
    stepsDone: doc.stepsDone,
    collectionsDropped: doc.collectionsDropped,
    leaseUntil: doc.leaseUntil,
    runs: doc.runs,
    requestedAt: doc.requestedAt,
    ...(doc.finishedAt !== undefined ? { finishedAt: doc.finishedAt } : {}),
  };
}

/**
 * Erasures in MongoDB. An erasure is found by the digest of its target (kind and id), never by
 * the target itself: the digest is what remains once the erasure is done.
 */
@Injectable()
export class ErasureRepository {
  constructor(
    @InjectModel(ErasureDocument.name) private readonly erasures: Model<ErasureDocument>,
  ) {}

  /** The running erasure of a target, if any. */
  async findActive(digest: string): Promise<ErasureRecord | null> {
    const doc = await this.erasures.findOne({ activeKey: digest }).lean<ErasureDocument>().exec();
    return doc ? toRecord(doc) : null;
  }

  /** Which of these targets (by digest) an erasure is running for, in one query. */
  async runningAmong(digests: string[]): Promise<Set<string>> {
    if (digests.length === 0) return new Set();
    const docs = await this.erasures
      .find({ activeKey: { $in: [...new Set(digests)] } })
      .select({ activeKey: 1 })
      .lean<Pick<ErasureDocument, 'activeKey'>[]>()
      .exec();
    return new Set(docs.map((doc) => doc.activeKey));
  }

  /** The latest erasure of a target, running or done. */
  async findLatest(digest: string): Promise<ErasureRecord | null> {
    const doc = await this.erasures
      .findOne({ targetDigest: digest })
      .sort({ requestedAt: -1 })
      .lean<ErasureDocument>()
      .exec();
    return doc ? toRecord(doc) : null;
  }

  /** A page of erasures, newest first, before `beforeId` when given; `more` when others follow. */
  async list(
    limit: number,
    beforeId?: string,
  ): Promise<{ erasures: ErasureRecord[]; more: boolean }> {
    const docs = await this.erasures
      .find(beforeId !== undefined ? { _id: { $lt: new Types.ObjectId(beforeId) } } : {})
      .sort({ _id: -1 })
      .limit(limit + 1)
      .lean<ErasureDocument[]>()
      .exec();
    return { erasures: docs.slice(0, limit).map(toRecord), more: docs.length > limit };
  }

  async findById(id: string): Promise<ErasureRecord | null> {
    if (!isObjectIdHex(id)) return null;
    const doc = await this.erasures.findById(id).lean<ErasureDocument>().exec();
    return doc ? toRecord(doc) : null;
  }

  /**
   * Records a running erasure of the tenant, held until `leaseUntil`; DUPLICATE when one is
   * running already (the unique active key decides between concurrent requests).
   */
  async insertRunning(
    tenant: Tenant,
    digest: string,
    now: Date,
    leaseUntil: Date,
  ): Promise<ErasureRecord | Duplicate> {
    const created = await orDuplicate(() =>
      this.erasures.create({
        kind: tenant.kind,
        target: tenant.id,
        targetDigest: digest,
        activeKey: digest,
        status: 'running',
        stepsDone: [],
        collectionsDropped: 0,
        leaseUntil,
        runs: 1,
        requestedAt: now,
      }),
    );
    return created === DUPLICATE ? DUPLICATE : toRecord(created.toObject<ErasureDocument>());
  }

  /** Records a step done and renews the lease. */
  async markStepDone(id: string, step: string, leaseUntil: Date): Promise<void> {
    await this.erasures
      .updateOne(
        { _id: new Types.ObjectId(id) },
        { $addToSet: { stepsDone: step }, $set: { leaseUntil } },
      )
      .exec();
  }

  /** Counts one dropped collection and renews the lease. */
  async countCollectionDropped(id: string, leaseUntil: Date): Promise<void> {
    await this.erasures
      .updateOne(
        { _id: new Types.ObjectId(id) },
        { $inc: { collectionsDropped: 1 }, $set: { leaseUntil } },
      )
      .exec();
  }

  /** Marks the erasure done and forgets its target; the digest and the counts remain. */
  async markDone(id: string, finishedAt: Date): Promise<void> {
    await this.erasures
      .updateOne(
        { _id: new Types.ObjectId(id) },
        { $set: { status: 'done', activeKey: `done:${id}`, finishedAt }, $unset: { target: 1 } },
      )
      .exec();
  }

  /**
   * Running ones, the earliest lease first (so those whose lease ran out come first), at most
   * `limit`: the takeover poll learns from the one query whether any runs at all.
   */
  async findRunningByLease(limit: number): Promise<ErasureRecord[]> {
    const docs = await this.erasures
      .find({ status: 'running' })
      .sort({ leaseUntil: 1 })
      .limit(limit)
      .lean<ErasureDocument[]>()
      .exec();
    return docs.map(toRecord);
  }

  /**
   * Takes an abandoned erasure over: renews its lease if it still has the lease that was read,
   * and counts the run. False when another instance took it first (on MongoDB; FerretDB does not
   * re-check the filter of an update).
   */
  async takeOver(erasure: ErasureRecord, leaseUntil: Date): Promise<boolean> {
    const taken = await this.erasures
      .updateOne(
        { _id: new Types.ObjectId(erasure.id), leaseUntil: erasure.leaseUntil },
        { $set: { leaseUntil }, $inc: { runs: 1 } },
      )
      .exec();
    return taken.modifiedCount === 1;
  }
}
