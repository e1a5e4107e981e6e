import { Injectable } from '@nestjs/common';
import type { Collection, Document } from 'mongodb';
import { orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { KeyedLock } from '../common/mongo/keyed-lock';
import { tenantFilter, type Tenant } from '../common/tenancy/namespace';

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

/** A records collection: the tenant's (IdempotencyStores.recordsOf), or the main one. */
type Records = Collection<Document>;

/**
 * The idempotency_records collections (IdempotencyStores says which one a request's records are
 * in), through the driver.
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
export class IdempotencyRepository {
  private readonly lane = new KeyedLock();

  /** Inserts a running record; DUPLICATE when the key's record exists (another request has it). */
  async insertRunning(
    records: Records,
    id: string,
    fingerprint: string,
    token: string,
    expiresAt: Date,
    tenant: Tenant | null,
  ): Promise<true | Duplicate> {
    return orDuplicate(async () => {
      await records.insertOne({
        _id: id as never,
        state: 'running',
        fingerprint,
        token,
        expiresAt,
        ...(tenant ? tenantFilter(tenant) : {}),
      });
      return true as const;
    });
  }

  async findById(records: Records, id: string): Promise<IdempotencyRecord | null> {
    const doc = await records.findOne({ _id: id as never });
    if (!doc) return null;
    return {
      id: doc._id as unknown as string,
      state: doc.state as IdempotencyRecord['state'],
      fingerprint: doc.fingerprint as string,
      token: doc.token as string,
      expiresAt: doc.expiresAt as Date,
      response: doc.response ? bytesOf(doc.response) : null,
    };
  }

  /**
   * Keeps the response of the request that holds the record. Only that request writes to it, so
   * the update cannot race another (unless its lease ran out first: docs/requests.md, "Idempotent requests").
   */
  async complete(
    records: Records,
    id: string,
    token: string,
    response: Buffer,
    expiresAt: Date,
  ): Promise<void> {
    await records.updateOne(
      { _id: id as never, token },
      { $set: { state: 'done', response, expiresAt } },
    );
  }

  /** Gives the key back (a 5xx, or a response that cannot be kept): a retry runs again. */
  async release(records: Records, id: string, token: string): Promise<void> {
    await this.lane.run(DELETIONS, () =>
      records.deleteOne({ _id: id as never, token, state: 'running' }),
    );
  }

  /** Deletes the record if it expired by `now`, so that the key can be claimed again. */
  async deleteIfExpired(records: Records, id: string, now: Date): Promise<void> {
    await this.lane.run(DELETIONS, () =>
      records.deleteOne({ _id: id as never, expiresAt: { $lte: now } }),
    );
  }

  /** Deletes up to `limit` records expired by `now`; returns how many went. */
  async deleteExpired(records: Records, now: Date, limit: number): Promise<number> {
    return this.lane.run(DELETIONS, async () => {
      const expired = await records
        .find({ expiresAt: { $lte: now } }, { projection: { _id: 1 } })
        .limit(limit)
        .toArray();
      if (expired.length === 0) return 0;
      const result = await records.deleteMany({
        _id: { $in: expired.map((doc) => doc._id) },
        expiresAt: { $lte: now },
      });
      return result.deletedCount;
    });
  }
}

/** A read gives BSON Binary for a Buffer; a document created here gives a Buffer. */
function bytesOf(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  const binary = value as { buffer?: unknown };
  if (binary.buffer instanceof Uint8Array) return Buffer.from(binary.buffer);
  throw new Error('an idempotency record holds a response that is not binary');
}
