import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { orDuplicate, type Duplicate } from '../mongo/duplicate';
import { KeyedLock } from '../mongo/keyed-lock';
import { IdempotencyRecordDocument } from './idempotency-record.schema';

export interface IdempotencyRecord {
  id: string;
  state: 'running' | 'done';
  fingerprint: string;
  token: string;
  expiresAt: Date;
  response: Buffer | null;
}

/** The only key of the deletion lane: every deletion of this process queues behind the others. */
const DELETIONS = 'deletions';

/**
 * The idempotency_records collection.
 *
 * Deletions are the one place where FerretDB's behaviour matters: it deletes by reading the
 * matching documents and then deleting their `_id`s, without checking the filter again, so a
 * deletion that read a record just before another request replaced it could delete the new
 * record, and a third request could then run the same key again. Every deletion of this process
 * therefore runs in one lane, one after another: between a deletion's read and its write no other
 * deletion can make room for a new record under the same `_id`. On MongoDB the filter of every
 * deletion is checked atomically per document, so several instances are exact there too.
 */
@Injectable()
export class IdempotencyRepository implements OnModuleInit {
  private readonly lane = new KeyedLock();

  constructor(
    @InjectModel(IdempotencyRecordDocument.name)
    private readonly records: Model<IdempotencyRecordDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.records.init();
  }

  /** Inserts a running record; DUPLICATE when the key's record exists (another request has it). */
  async insertRunning(
    id: string,
    fingerprint: string,
    token: string,
    expiresAt: Date,
  ): Promise<true | Duplicate> {
    return orDuplicate(async () => {
      await this.records.create({ _id: id, state: 'running', fingerprint, token, expiresAt });
      return true as const;
    });
  }

  async findById(id: string): Promise<IdempotencyRecord | null> {
    const doc = await this.records.findById(id).lean().exec();
    if (!doc) return null;
    return {
      id: doc._id,
      state: doc.state,
      fingerprint: doc.fingerprint,
      token: doc.token,
      expiresAt: doc.expiresAt,
      response: doc.response ? bytesOf(doc.response) : null,
    };
  }

  /**
   * Keeps the response of the request that holds the record. Only that request writes to it, so
   * the update cannot race another (unless its lease ran out first: README, "Idempotent requests").
   */
  async complete(id: string, token: string, response: Buffer, expiresAt: Date): Promise<void> {
    await this.records
      .updateOne({ _id: id, token }, { $set: { state: 'done', response, expiresAt } })
      .exec();
  }

  /** Gives the key back (a 5xx, or a response that cannot be kept): a retry runs again. */
  async release(id: string, token: string): Promise<void> {
    await this.lane.run(DELETIONS, () =>
      this.records.deleteOne({ _id: id, token, state: 'running' }).exec(),
    );
  }

  /** Deletes the record if it expired by `now`, so that the key can be claimed again. */
  async deleteIfExpired(id: string, now: Date): Promise<void> {
    await this.lane.run(DELETIONS, () =>
      this.records.deleteOne({ _id: id, expiresAt: { $lte: now } }).exec(),
    );
  }

  /** Deletes up to `limit` records expired by `now`; returns how many went. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    return this.lane.run(DELETIONS, async () => {
      const expired = await this.records
        .find({ expiresAt: { $lte: now } }, { _id: 1 })
        .limit(limit)
        .lean()
        .exec();
      if (expired.length === 0) return 0;
      const result = await this.records
        .deleteMany({ _id: { $in: expired.map((doc) => doc._id) }, expiresAt: { $lte: now } })
        .exec();
      return result.deletedCount;
    });
  }
}

/** A lean read gives BSON Binary for a Buffer path; a document gives a Buffer. */
function bytesOf(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  const binary = value as { buffer?: unknown };
  if (binary.buffer instanceof Uint8Array) return Buffer.from(binary.buffer);
  throw new Error('an idempotency record holds a response that is not binary');
}
