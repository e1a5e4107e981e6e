import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { TenantPlacementDocument } from './tenant-placement.schema';

export interface TenantPlacement {
  cluster: string;
  /** The tenant's database there, also the placement's key. */
  database: string;
  /** The cluster of its change feed; absent: the main database. */
  feed?: string;
  feedMoving?: { to: string; move: string; phase: 'copying' | 'paused' };
}

@Injectable()
export class TenantPlacementsRepository implements OnModuleInit {
  constructor(
    @InjectModel(TenantPlacementDocument.name)
    private readonly placements: Model<TenantPlacementDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.placements.init();
  }

  async find(database: string): Promise<TenantPlacement | null> {
    const doc = await this.placements
      .findById(database, { cluster: 1, feed: 1, feedMoving: 1 })
      .lean<TenantPlacementDocument>()
      .exec();
    if (!doc) return null;
    return {
      cluster: doc.cluster,
      database: doc._id,
      ...(doc.feed !== undefined ? { feed: doc.feed } : {}),
      ...(doc.feedMoving ? { feedMoving: doc.feedMoving } : {}),
    };
  }

  /** DUPLICATE when the tenant has a placement already. */
  async insert(placement: TenantPlacement): Promise<void | Duplicate> {
    return orDuplicate(async () => {
      await this.placements.create({
        _id: placement.database,
        cluster: placement.cluster,
        feed: placement.cluster,
      });
    });
  }

  /** Places the tenant of `database` on `cluster` (a move), whether it was placed before or not. */
  async setCluster(database: string, cluster: string): Promise<void> {
    await this.placements
      .updateOne(
        { _id: database },
        { $set: { cluster }, $setOnInsert: { createdAt: new Date() } },
        { upsert: true, timestamps: false },
      )
      .exec();
  }

  /** Starts, pauses or ends (null) the move of the tenant's feed. */
  async setFeedMoving(
    database: string,
    moving: { to: string; move: string; phase: 'copying' | 'paused' } | null,
  ): Promise<void> {
    await this.placements
      .updateOne(
        { _id: database },
        moving ? { $set: { feedMoving: moving } } : { $unset: { feedMoving: 1 } },
      )
      .exec();
  }

  /** Points the tenant's feed at `cluster` and ends its move. */
  async switchFeed(database: string, cluster: string): Promise<void> {
    await this.placements
      .updateOne({ _id: database }, { $set: { feed: cluster }, $unset: { feedMoving: 1 } })
      .exec();
  }

  async countOn(cluster: string): Promise<number> {
    return this.placements.countDocuments({ cluster }).exec();
  }

  /** Every cluster some placement names, for its collections or for its feed. */
  async clustersInUse(): Promise<string[]> {
    const [clusters, feeds] = await Promise.all([
      this.placements.distinct('cluster').exec(),
      this.placements.distinct('feed').exec(),
    ]);
    return [...new Set([...clusters, ...feeds].filter((c) => c !== null).map(String))];
  }
}
