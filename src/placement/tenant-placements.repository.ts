import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { TenantPlacementDocument } from './tenant-placement.schema';

export interface TenantPlacement {
  cluster: string;
  /** The tenant's database there, also the placement's key. */
  database: string;
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
      .findById(database, { cluster: 1 })
      .lean<{ _id: string; cluster: string }>()
      .exec();
    return doc ? { cluster: doc.cluster, database: doc._id } : null;
  }

  /** DUPLICATE when the tenant has a placement already. */
  async insert(placement: TenantPlacement): Promise<void | Duplicate> {
    return orDuplicate(async () => {
      await this.placements.create({ _id: placement.database, cluster: placement.cluster });
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

  async countOn(cluster: string): Promise<number> {
    return this.placements.countDocuments({ cluster }).exec();
  }

  /** Every cluster some placement names. */
  async clustersInUse(): Promise<string[]> {
    return (await this.placements.distinct('cluster').exec()).map(String);
  }
}
