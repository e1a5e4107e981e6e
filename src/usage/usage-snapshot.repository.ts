import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { UsageSnapshotDocument } from './usage-snapshot.schema';

/** A day's snapshot as the instance taking it sees it. */
export interface SnapshotRun {
  day: string;
  status: 'running' | 'done';
  leaseUntil: Date;
  runs: number;
}

function toRun(doc: UsageSnapshotDocument): SnapshotRun {
  return { day: doc._id, status: doc.status, leaseUntil: doc.leaseUntil, runs: doc.runs };
}

/** The days' snapshots in usage_snapshots, with their leases. */
@Injectable()
export class UsageSnapshotRepository {
  constructor(
    @InjectModel(UsageSnapshotDocument.name) private readonly model: Model<UsageSnapshotDocument>,
  ) {}

  /** Records the day's snapshot as running, held until `leaseUntil`; DUPLICATE when it is recorded already. */
  async begin(day: string, now: Date, leaseUntil: Date): Promise<SnapshotRun | Duplicate> {
    const created = await orDuplicate(() =>
      this.model.create({ _id: day, status: 'running', leaseUntil, runs: 1, startedAt: now }),
    );
    return created === DUPLICATE ? DUPLICATE : toRun(created.toObject<UsageSnapshotDocument>());
  }

  async find(day: string): Promise<SnapshotRun | null> {
    const doc = await this.model.findById(day).lean<UsageSnapshotDocument>().exec();
    return doc ? toRun(doc) : null;
  }

  /**
   * Takes an abandoned snapshot over: renews its lease if it still has the lease and run that
   * were read, and counts the run. False when another instance took it first (on MongoDB;
   * FerretDB does not re-check the filter of an update, so two may both go on: each gauge is
   * still written once, by its fixed id).
   */
  async takeOver(run: SnapshotRun, leaseUntil: Date): Promise<SnapshotRun | null> {
    const taken = await this.model
      .updateOne(
        { _id: run.day, leaseUntil: run.leaseUntil, runs: run.runs },
        { $set: { leaseUntil }, $inc: { runs: 1 } },
      )
      .exec();
    return taken.modifiedCount === 1 ? { ...run, leaseUntil, runs: run.runs + 1 } : null;
  }

  async renew(day: string, leaseUntil: Date): Promise<void> {
    await this.model.updateOne({ _id: day }, { $set: { leaseUntil } }).exec();
  }

  async markDone(day: string, finishedAt: Date): Promise<void> {
    await this.model.updateOne({ _id: day }, { $set: { status: 'done', finishedAt } }).exec();
  }

  /** Deletes the snapshots of days before `day`. */
  async deleteBefore(day: string): Promise<void> {
    await this.model.deleteMany({ _id: { $lt: day } }).exec();
  }
}
