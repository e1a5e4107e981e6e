import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { DUPLICATE, orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { KeyedLock } from '../common/mongo/keyed-lock';
import { isObjectIdHex } from '../common/mongo/object-id';
import type { Tenant } from '../common/tenancy/namespace';
import type { MovedFileSource } from '../files';
import {
  TenantMoveDocument,
  TenantMoveRunDocument,
  type MovedLocation,
} from './tenant-move.schema';

export type TenantMove = Omit<TenantMoveDocument, '_id'> & { id: string };

function toMove(doc: TenantMoveDocument): TenantMove {
  const { _id, ...rest } = doc;
  return { ...rest, id: _id.toHexString() };
}

const activeKeyOf = (database: string) => `move:${database}`;

/**
 * Tenant moves and their runs in MongoDB.
 *
 * This instance's writes of one move document go one at a time (`write`): the runner's counters
 * and phases and the heartbeat's lease renewals would otherwise reach the database together, and
 * FerretDB applies an update as a read and a rewrite of the whole document, so one of two
 * concurrent updates of a document can undo the other (a lost `$inc` of `collectionsCopied`).
 * Across instances they do not meet: only the lease holder writes a running move, and another
 * takes it over only once the lease ran out.
 */
@Injectable()
export class TenantMoveRepository {
  private readonly writes = new KeyedLock();

  constructor(
    @InjectModel(TenantMoveDocument.name) private readonly moves: Model<TenantMoveDocument>,
    @InjectModel(TenantMoveRunDocument.name) private readonly runs: Model<TenantMoveRunDocument>,
  ) {}

  async findById(id: string): Promise<TenantMove | null> {
    if (!isObjectIdHex(id)) return null;
    const doc = await this.moves.findById(id).lean<TenantMoveDocument>().exec();
    return doc ? toMove(doc) : null;
  }

  /** The running move of the tenant whose database this is, if any. */
  async findRunning(database: string): Promise<TenantMove | null> {
    const doc = await this.moves
      .findOne({ activeKey: activeKeyOf(database) })
      .lean<TenantMoveDocument>()
      .exec();
    return doc ? toMove(doc) : null;
  }

  /** Newest first, after the move `afterId` if given; one more than `limit` tells that more follow. */
  async list(limit: number, afterId?: string): Promise<{ moves: TenantMove[]; more: boolean }> {
    const docs = await this.moves
      .find(afterId !== undefined ? { _id: { $lt: new Types.ObjectId(afterId) } } : {})
      .sort({ _id: -1 })
      .limit(limit + 1)
      .lean<TenantMoveDocument[]>()
      .exec();
    return { moves: docs.slice(0, limit).map(toMove), more: docs.length > limit };
  }

  /** Records a running move (its first run claimed); DUPLICATE when one runs for the tenant. */
  async insertRunning(
    tenant: Tenant,
    database: string,
    cluster: string,
    from: string | null,
    now: Date,
    leaseUntil: Date,
  ): Promise<TenantMove | Duplicate> {
    const _id = new Types.ObjectId();
    const created = await orDuplicate(() =>
      this.moves.create({
        _id,
        kind: tenant.kind,
        target: tenant.id,
        database,
        activeKey: activeKeyOf(database),
        cluster,
        from,
        status: 'running',
        phase: 'announcing',
        leaseUntil,
        runs: 1,
        startedAt: now,
        progressAt: now,
      }),
    );
    if (created === DUPLICATE) return DUPLICATE;
    await this.runs.create({ _id: `${_id.toHexString()}:1`, claimedAt: now });
    return toMove(created.toObject<TenantMoveDocument>());
  }

  /** Removes a move that never started (it lost to an erasure of its tenant). */
  async remove(id: string): Promise<void> {
    await this.moves.deleteOne({ _id: new Types.ObjectId(id), phase: 'announcing' }).exec();
  }

  async update(
    id: string,
    set: Partial<
      Pick<
        TenantMoveDocument,
        | 'phase'
        | 'announcedAt'
        | 'switchedAt'
        | 'collections'
        | 'leaseUntil'
        | 'feedMoves'
        | 'feedFrom'
        | 'items'
        | 'deadlineAt'
        | 'pass'
        | 'itemsLeft'
        | 'progressAt'
      >
    >,
    inc: Partial<
      Pick<TenantMoveDocument, 'collectionsCopied' | 'itemsCopied' | 'filesCopied'>
    > = {},
  ): Promise<void> {
    await this.write(id, () =>
      this.moves
        .updateOne(
          { _id: new Types.ObjectId(id) },
          { $set: set, ...(Object.keys(inc).length > 0 ? { $inc: inc } : {}) },
        )
        .exec(),
    );
  }

  /**
   * Renews the lease of the move's run `run`; false when the move has gone on to another run
   * (taken over) or ended.
   */
  async renewLease(id: string, run: number, leaseUntil: Date): Promise<boolean> {
    const result = await this.write(id, () =>
      this.moves
        .updateOne(
          { _id: new Types.ObjectId(id), runs: run, status: 'running' },
          { $set: { leaseUntil } },
        )
        .exec(),
    );
    return result.matchedCount === 1;
  }

  /** Notes a location to remove at the end (`sources` or `orphans`), and renews the lease. */
  async addToRemove(
    id: string,
    list: 'sources' | 'orphans',
    location: MovedLocation,
    database: { cluster: string; database: string } | null,
    leaseUntil: Date,
  ): Promise<void> {
    await this.write(id, () =>
      this.moves
        .updateOne(
          { _id: new Types.ObjectId(id) },
          {
            $addToSet: {
              [list]: location,
              ...(database ? { sourceDatabases: database } : {}),
            },
            $set: { leaseUntil },
          },
        )
        .exec(),
    );
  }

  /** Notes the old bytes of files about to be copied (removed at the end), and renews the lease. */
  async addFileSources(id: string, sources: MovedFileSource[], leaseUntil: Date): Promise<void> {
    await this.write(id, () =>
      this.moves
        .updateOne(
          { _id: new Types.ObjectId(id) },
          { $addToSet: { fileSources: { $each: sources } }, $set: { leaseUntil } },
        )
        .exec(),
    );
  }

  /**
   * Records why the move fails: the collection it could not move keeps its source (`kept`), and
   * the move goes on to remove the other sources.
   */
  async fail(id: string, error: string, kept: MovedLocation | null): Promise<void> {
    await this.write(id, () =>
      this.moves
        .updateOne(
          { _id: new Types.ObjectId(id) },
          { $set: { error }, ...(kept ? { $pull: { sources: kept } } : {}) },
        )
        .exec(),
    );
  }

  /** Ends the move (done or failed) and forgets its tenant's id. */
  async end(id: string, status: 'done' | 'failed', finishedAt: Date): Promise<void> {
    await this.write(id, () =>
      this.moves
        .updateOne(
          { _id: new Types.ObjectId(id) },
          { $set: { status, activeKey: `ended:${id}`, finishedAt }, $unset: { target: 1 } },
        )
        .exec(),
    );
  }

  /**
   * Running ones, the earliest lease first (so those whose lease ran out come first), at most
   * `limit`: the takeover poll learns from the one query whether any runs at all.
   */
  async findRunningByLease(limit: number): Promise<TenantMove[]> {
    const docs = await this.moves
      .find({ status: 'running' })
      .sort({ leaseUntil: 1 })
      .limit(limit)
      .lean<TenantMoveDocument[]>()
      .exec();
    return docs.map(toMove);
  }

  /**
   * Takes an abandoned move over: claims its next run (an insert only one instance wins), then
   * renews its lease. False when another instance claimed that run first.
   */
  async takeOver(move: TenantMove, leaseUntil: Date): Promise<boolean> {
    const run = move.runs + 1;
    const claimed = await orDuplicate(() =>
      this.runs.create({ _id: `${move.id}:${run}`, claimedAt: new Date() }),
    );
    if (claimed === DUPLICATE) return false;
    await this.write(move.id, () =>
      this.moves
        .updateOne({ _id: new Types.ObjectId(move.id) }, { $set: { leaseUntil, runs: run } })
        .exec(),
    );
    move.runs = run;
    move.leaseUntil = leaseUntil;
    return true;
  }

  /** One of this instance's writes of move `id`, after the ones before it (see the class). */
  private write<T>(id: string, task: () => Promise<T>): Promise<T> {
    return this.writes.run(id, task);
  }
}
