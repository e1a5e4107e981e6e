import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate, type Duplicate } from '../../../common/mongo/duplicate';
import { FallbackWriteQueue } from '../../../common/mongo/fallback-database';
import { UniqueClaimDocument } from './unique-claim.schema';

export interface UniqueClaim {
  key: string;
  physical: string;
  itemId: string;
  token: string;
  claimedAt: Date;
}

function toClaim(doc: UniqueClaimDocument): UniqueClaim {
  const { _id, physical, itemId, token, claimedAt } = doc;
  return { key: _id, physical, itemId, token, claimedAt };
}

/**
 * The data_unique_claims collection. Whether a value is taken is decided only by inserts of a
 * claim's `_id`. Deletes name the claim by its token; they run one at a time per claim `_id` in
 * this process, because FerretDB does not re-check a delete's filter at write time and could
 * otherwise remove a claim inserted in its place meanwhile (see fallback-database.ts).
 */
@Injectable()
export class UniqueClaimRepository implements OnModuleInit {
  private readonly deletes = new FallbackWriteQueue();

  constructor(
    @InjectModel(UniqueClaimDocument.name) private readonly claims: Model<UniqueClaimDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.claims.init();
  }

  /** Takes the value; DUPLICATE when a claim of it exists. */
  async insert(claim: UniqueClaim): Promise<UniqueClaim | Duplicate> {
    const { key, ...fields } = claim;
    const created = await orDuplicate(() => this.claims.create({ _id: key, ...fields }));
    return created === DUPLICATE ? DUPLICATE : claim;
  }

  async find(key: string): Promise<UniqueClaim | null> {
    const doc = await this.claims.findById(key).lean<UniqueClaimDocument>().exec();
    return doc ? toClaim(doc) : null;
  }

  /** The claims made for one item. */
  async findForItem(physical: string, itemId: string): Promise<UniqueClaim[]> {
    const docs = await this.claims.find({ physical, itemId }).lean<UniqueClaimDocument[]>().exec();
    return docs.map(toClaim);
  }

  /**
   * Deletes `stale` and inserts `next` with the same `_id` in its place. DUPLICATE when another
   * claim got in first (a create that found the value free after the delete).
   */
  replace(stale: UniqueClaim, next: UniqueClaim): Promise<UniqueClaim | Duplicate> {
    return this.deletes.run(stale.key, async () => {
      await this.claims.deleteOne({ _id: stale.key, token: stale.token }).exec();
      return this.insert(next);
    });
  }

  /** Deletes the claim, unless it was replaced meanwhile. */
  release(claim: UniqueClaim): Promise<void> {
    return this.deletes.run(claim.key, async () => {
      await this.claims.deleteOne({ _id: claim.key, token: claim.token }).exec();
    });
  }

  /** Deletes every claim of a dropped collection. */
  async deleteForCollection(physical: string): Promise<void> {
    await this.claims.deleteMany({ physical }).exec();
  }
}
