import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../../common/mongo/duplicate';
import type { Tenant } from '../../common/tenancy/namespace';
import type { RegisteredCollection } from '../collections/registered-collection';
import { SearchRunDocument, type SearchRunKind } from './search-build.schema';

/** A search run as the runner works on it. */
export interface SearchRun {
  id: string;
  entryId: string;
  physical: string;
  tenant: Tenant;
  branch: string;
  name: string;
  kind: SearchRunKind;
  version: number;
  status: 'running' | 'done';
  startAt: Date;
  lastId?: unknown;
  indexed: number;
  leaseUntil: Date;
  runs: number;
}

function toRun(doc: SearchRunDocument): SearchRun {
  return {
    id: doc._id.toHexString(),
    entryId: doc.entryId,
    physical: doc.physical,
    tenant: { kind: doc.tenantKind, id: doc.tenantId },
    branch: doc.branch,
    name: doc.name,
    kind: doc.kind,
    version: doc.version,
    status: doc.status,
    startAt: doc.startAt,
    ...(doc.lastId !== undefined ? { lastId: doc.lastId } : {}),
    indexed: doc.indexed,
    leaseUntil: doc.leaseUntil,
    runs: doc.runs,
  };
}

/** Search runs (builds and clears of word lists) in MongoDB, with their leases. */
@Injectable()
export class SearchBuildRepository implements OnModuleInit {
  constructor(
    @InjectModel(SearchRunDocument.name) private readonly runs: Model<SearchRunDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.runs.init();
  }

  /**
   * Records a running run of the collection, held until `leaseUntil`; the one recorded already
   * for this kind and version when there is one (a repeated request).
   */
  async insertRunning(
    entry: RegisteredCollection,
    tenant: Tenant,
    branch: string,
    kind: SearchRunKind,
    version: number,
    startAt: Date,
    leaseUntil: Date,
  ): Promise<SearchRun | null> {
    const created = await orDuplicate(() =>
      this.runs.create({
        entryId: entry.id,
        physical: entry.physical,
        tenantKind: tenant.kind,
        tenantId: tenant.id,
        branch,
        name: entry.name,
        kind,
        version,
        status: 'running',
        startAt,
        indexed: 0,
        leaseUntil,
        runs: 1,
        createdAt: new Date(),
      }),
    );
    return created === DUPLICATE ? null : toRun(created.toObject<SearchRunDocument>());
  }

  /** The build of this configuration version, if any. */
  async findBuild(entryId: string, version: number): Promise<SearchRun | null> {
    const doc = await this.runs
      .findOne({ entryId, kind: 'build', version })
      .lean<SearchRunDocument>()
      .exec();
    return doc ? toRun(doc) : null;
  }

  /** The highest configuration version recorded for the collection (0: none). */
  async lastVersion(entryId: string): Promise<number> {
    const doc = await this.runs
      .findOne({ entryId })
      .sort({ version: -1 })
      .select({ version: 1 })
      .lean<Pick<SearchRunDocument, 'version'>>()
      .exec();
    return doc?.version ?? 0;
  }

  /**
   * Records a batch done (the last `_id` and the items walked) and renews the lease, while the
   * run is still held by the holder that took it (`runs`, counted by every takeover). False when
   * it is not: another holder goes on, this one stops.
   */
  async recordBatch(
    run: Pick<SearchRun, 'id' | 'runs'>,
    lastId: unknown,
    indexed: number,
    leaseUntil: Date,
  ): Promise<boolean> {
    const held = await this.runs
      .updateOne(
        { _id: new Types.ObjectId(run.id), runs: run.runs },
        { $set: { lastId, indexed, leaseUntil } },
      )
      .exec();
    return held.matchedCount === 1;
  }

  /** Renews the lease only (waiting for the start, or inside a long batch); false as recordBatch. */
  async renew(run: Pick<SearchRun, 'id' | 'runs'>, leaseUntil: Date): Promise<boolean> {
    const held = await this.runs
      .updateOne({ _id: new Types.ObjectId(run.id), runs: run.runs }, { $set: { leaseUntil } })
      .exec();
    return held.matchedCount === 1;
  }

  async markDone(id: string): Promise<void> {
    await this.runs.updateOne({ _id: new Types.ObjectId(id) }, { $set: { status: 'done' } }).exec();
  }

  /**
   * Running ones, the earliest lease first (so those whose lease ran out come first), at most
   * `limit`: the takeover poll learns from the one query whether any runs at all.
   */
  async findRunningByLease(limit: number): Promise<SearchRun[]> {
    const docs = await this.runs
      .find({ status: 'running' })
      .sort({ leaseUntil: 1 })
      .limit(limit)
      .lean<SearchRunDocument[]>()
      .exec();
    return docs.map(toRun);
  }

  /**
   * Takes an abandoned run over: renews its lease if it still has the lease and holder that were
   * read, and counts the run (the new holder). The run as taken, or null when another instance
   * took it first (on MongoDB; FerretDB does not re-check the filter of an update).
   */
  async takeOver(run: SearchRun, leaseUntil: Date): Promise<SearchRun | null> {
    const taken = await this.runs
      .updateOne(
        { _id: new Types.ObjectId(run.id), leaseUntil: run.leaseUntil, runs: run.runs },
        { $set: { leaseUntil }, $inc: { runs: 1 } },
      )
      .exec();
    return taken.modifiedCount === 1 ? { ...run, leaseUntil, runs: run.runs + 1 } : null;
  }

  /** Deletes every run of a dropped collection. */
  async deleteForCollection(physical: string): Promise<void> {
    await this.runs.deleteMany({ physical }).exec();
  }
}
