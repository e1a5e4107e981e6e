import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Collection, Document } from 'mongodb';
import type { Tenant } from '../common/tenancy/namespace';
import { IDEMPOTENCY_STORES, type IdempotencyStores } from './idempotency-stores';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../config';
import { DUPLICATE } from '../common/mongo/duplicate';
import { IdempotencyInProgressError, IdempotencyKeyReusedError } from './idempotency.errors';
import { IdempotencyRepository } from './idempotency.repository';
import { openResponse, sealResponse, type StoredResponse } from './sealed-response';

/** One request that carries a key, as the rules see it. */
export interface IdempotentRequest {
  /** recordIdOf(scope, key). */
  recordId: string;
  /** fingerprintOf(request). */
  fingerprint: string;
  /** responseKeyOf(scope, key). */
  responseKey: Buffer;
  /** Whose records it reads and writes (null: the operator's). */
  tenant: Tenant | null;
}

/** The request holds the key and runs; `token` proves it when its outcome is settled. */
export interface Claim {
  request: IdempotentRequest;
  token: string;
  /** The records collection it holds the key in. */
  records: Collection<Document>;
}

export type Admission =
  { kind: 'run'; claim: Claim } | { kind: 'replay'; response: StoredResponse };

/** Seconds a repeat of a running request is told to wait: most requests take far less. */
const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/**
 * Rounds of "insert, else read what is there": a round ends early only when the record found
 * was expired (and is removed) or vanished, so more rounds mean keys being reused as they expire.
 */
const ADMISSION_ROUNDS = 3;

/**
 * The rules of Idempotency-Key. The first request inserts a running record and runs; a repeat
 * (same scope, key and fingerprint) gets the kept response, or 409 while the first still runs;
 * another request with the key gets 422. Responses below 500 are kept for IDEMPOTENCY_TTL_MS;
 * a 5xx gives the key back so that a retry runs again. A running record expires after
 * IDEMPOTENCY_LEASE_MS, so a crashed instance blocks its keys no longer than that.
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger('Idempotency');
  private readonly ttlMs: number;
  private readonly leaseMs: number;

  constructor(
    private readonly records: IdempotencyRepository,
    @Inject(IDEMPOTENCY_STORES) private readonly stores: IdempotencyStores,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.ttlMs = config.idempotency.ttlMs;
    this.leaseMs = config.idempotency.leaseMs;
  }

  /** Run (the key is now held), replay, or throw 409 / 422. Nothing is run before this returns. */
  async admit(request: IdempotentRequest): Promise<Admission> {
    const records = await this.stores.recordsOf(request.tenant);
    for (let round = 0; round < ADMISSION_ROUNDS; round += 1) {
      const token = randomUUID();
      const lease = new Date(Date.now() + this.leaseMs);
      const inserted = await this.records.insertRunning(
        records,
        request.recordId,
        request.fingerprint,
        token,
        lease,
        request.tenant,
      );
      if (inserted !== DUPLICATE) return { kind: 'run', claim: { request, token, records } };

      const record = await this.records.findById(records, request.recordId);
      if (record === null) continue;
      const now = new Date();
      // An expired record is no answer: a kept response past its period, or the lease of a
      // request whose instance died. It is removed and the key claimed afresh.
      if (record.expiresAt <= now) {
        await this.records.deleteIfExpired(records, request.recordId, now);
        continue;
      }
      if (record.fingerprint !== request.fingerprint) throw new IdempotencyKeyReusedError();
      if (record.state === 'running' || record.response === null) {
        throw new IdempotencyInProgressError(IN_PROGRESS_RETRY_AFTER_SECONDS);
      }
      return { kind: 'replay', response: openResponse(record.response, request.responseKey) };
    }
    throw new IdempotencyInProgressError(IN_PROGRESS_RETRY_AFTER_SECONDS);
  }

  /**
   * Settles a claim with the response about to be sent: kept when below 500, else (or when
   * `response` is null: it cannot be kept) the key is given back. A failure here is logged, not
   * thrown: the request has run and its response goes out; the record stays running until its
   * lease ends, and a retry after that runs again.
   */
  async settle(claim: Claim, response: StoredResponse | null, traceId: string): Promise<void> {
    const { recordId, responseKey } = claim.request;
    try {
      if (response === null) {
        this.logger.warn(
          { traceId },
          'response not kept for its Idempotency-Key (over IDEMPOTENCY_MAX_RESPONSE_BYTES, or streamed); a retry runs again',
        );
      }
      if (response === null || response.status >= 500) {
        await this.records.release(claim.records, recordId, claim.token);
        return;
      }
      await this.records.complete(
        claim.records,
        recordId,
        claim.token,
        sealResponse(response, responseKey),
        new Date(Date.now() + this.ttlMs),
      );
    } catch (error) {
      this.logger.warn(
        { traceId, err: error },
        'could not settle an idempotency record; its key stays held until the lease ends',
      );
    }
  }
}
