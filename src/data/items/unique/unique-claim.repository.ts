import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Collection } from 'mongodb';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate, type Duplicate } from '../../../common/mongo/duplicate';
import { FallbackWriteQueue } from '../../../common/mongo/fallback-database';
import {
  copyChanged,
  syncDocuments,
  type ChangedCopyProgress,
  type SyncResult,
} from '../../../common/mongo/document-sync';
import { TenantStorage, type NativeCollection } from '../../storage/tenant-storage';
import { UniqueClaimDocument } from './unique-claim.schema';

export interface UniqueClaim {
  key: string;
  /** The collection whose value it claims; the claim lives in the same database. */
  target: NativeCollection;
  itemId: string;
  token: string;
  claimedAt: Date;
  /** Its item is being deleted (UniqueValuesService.beforeDelete). */
  releasing: boolean;
}

type StoredClaim = Omit<UniqueClaimDocument, 'claimedAt'> & { claimedAt: Date };

const CLAIMS = 'data_unique_claims';
const BY_ITEM = { name: 'physical_item', key: { physical: 1, itemId: 1 } } as const;

/**
 * The uniqueField claims of a collection, kept beside it: in `data_unique_claims` of the
 * database that holds the collection (the tenant's database, or the main one for collections
 * registered before tenants were placed), so a tenant's claims live on its cluster. Whether a
 * value is taken is decided only by inserts of a claim's `_id`. Deletes name the claim by its
 * token; they run one at a time per claim `_id` in this process, because FerretDB does not
 * re-check a delete's filter at write time and could otherwise remove a claim inserted in its
 * place meanwhile (see fallback-database.ts).
 */
@Injectable()
export class UniqueClaimRepository implements OnModuleInit {
  private readonly deletes = new FallbackWriteQueue();
  /** Tenant databases whose claims index this instance has made sure of. */
  private readonly indexed = new Map<string, Promise<unknown>>();

  constructor(
    private readonly storage: TenantStorage,
    @InjectModel(UniqueClaimDocument.name) private readonly mainClaims: Model<UniqueClaimDocument>,
  ) {}

  /** The main database's claims collection gets its index with the service's other indexes. */
  async onModuleInit(): Promise<void> {
    await this.mainClaims.init();
  }

  private claimsOf(target: NativeCollection): Collection<StoredClaim> {
    return this.storage.companionOf<StoredClaim>(target, CLAIMS);
  }

  /** The index that finds an item's claims, made once per tenant database and instance. */
  private async ensureIndex(target: NativeCollection): Promise<void> {
    if (target.database === undefined) return;
    const key = `${target.cluster ?? ''}/${target.database}`;
    let made = this.indexed.get(key);
    if (!made) {
      made = this.claimsOf(target).createIndex(BY_ITEM.key, { name: BY_ITEM.name });
      this.indexed.set(key, made);
      // A failed attempt is tried again by the next claim.
      made.catch(() => this.indexed.delete(key));
    }
    await made;
  }

  /** Takes the value; DUPLICATE when a claim of it exists. */
  async insert(claim: UniqueClaim): Promise<UniqueClaim | Duplicate> {
    await this.ensureIndex(claim.target);
    const { key, target, itemId, token, claimedAt } = claim;
    const created = await orDuplicate(() =>
      this.claimsOf(target).insertOne({
        _id: key,
        physical: target.physical,
        itemId,
        token,
        claimedAt,
      }),
    );
    return created === DUPLICATE ? DUPLICATE : claim;
  }

  async find(target: NativeCollection, key: string): Promise<UniqueClaim | null> {
    const doc = await this.claimsOf(target).findOne({ _id: key });
    return doc ? toClaim(doc, target) : null;
  }

  /** The claims made for these items. */
  async findForItems(target: NativeCollection, itemIds: readonly string[]): Promise<UniqueClaim[]> {
    const docs = await this.claimsOf(target)
      .find({ physical: target.physical, itemId: { $in: [...itemIds] } })
      .toArray();
    return docs.map((doc) => toClaim(doc, target));
  }

  /** Marks the claim as going with its item, unless it was replaced meanwhile. */
  markReleasing(claim: UniqueClaim): Promise<void> {
    return this.deletes.run(claim.key, async () => {
      await this.claimsOf(claim.target).updateOne(
        { _id: claim.key, token: claim.token },
        { $set: { releasing: true } },
      );
    });
  }

  /**
   * Deletes `stale` and inserts `next` with the same `_id` in its place. DUPLICATE when another
   * claim got in first (a create that found the value free after the delete).
   */
  replace(stale: UniqueClaim, next: UniqueClaim): Promise<UniqueClaim | Duplicate> {
    return this.deletes.run(stale.key, async () => {
      await this.claimsOf(stale.target).deleteOne({ _id: stale.key, token: stale.token });
      return this.insert(next);
    });
  }

  /** Deletes the claim, unless it was replaced meanwhile. */
  release(claim: UniqueClaim): Promise<void> {
    return this.deletes.run(claim.key, async () => {
      await this.claimsOf(claim.target).deleteOne({ _id: claim.key, token: claim.token });
    });
  }

  /**
   * Makes the claims of `to` (the same collection in another database, a move's target) those
   * of `from`; how many it copied and how many could not be yet (syncDocuments).
   */
  async copy(
    from: NativeCollection,
    to: NativeCollection,
    onBatch?: (progress: ChangedCopyProgress) => Promise<void>,
  ): Promise<SyncResult> {
    await this.ensureIndex(to);
    return syncDocuments(
      this.claimsOf(from),
      this.claimsOf(to),
      { physical: from.physical },
      ['token'],
      onBatch,
    );
  }

  /**
   * Copies the claims of `from` made at or after `since`, and those with the `retry` keys, to
   * `to` (a move's catch-up pass: copyChanged); released ones go with `copy`, the last pass.
   */
  async copyChanged(
    from: NativeCollection,
    to: NativeCollection,
    since: Date,
    retry: readonly unknown[],
    onBatch: (progress: ChangedCopyProgress) => Promise<void>,
  ): Promise<SyncResult & { refusedIds: unknown[] }> {
    await this.ensureIndex(to);
    return copyChanged(
      this.claimsOf(from),
      this.claimsOf(to),
      { physical: from.physical },
      'claimedAt',
      since,
      retry,
      onBatch,
    );
  }

  /** Deletes every claim of a dropped collection. */
  async deleteForCollection(target: NativeCollection): Promise<void> {
    await this.claimsOf(target).deleteMany({ physical: target.physical });
  }
}

function toClaim(doc: StoredClaim, target: NativeCollection): UniqueClaim {
  const { _id, itemId, token, claimedAt, releasing } = doc;
  return { key: _id, target, itemId, token, claimedAt, releasing: releasing === true };
}
