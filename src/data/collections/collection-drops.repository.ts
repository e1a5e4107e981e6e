import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { orDuplicate } from '../../common/mongo/duplicate';
import type { NativeCollection } from '../storage/tenant-storage';
import { CollectionDropDocument } from './collection-drop.schema';

export interface Tombstone extends NativeCollection {
  /** The `_id` of the registry entry that was dropped. */
  id: Types.ObjectId;
  droppedAt: Date;
  /** The source of a moved collection: no registry entry or index slot goes with it. */
  movedAway?: true;
}

function where({ physical, cluster, database }: NativeCollection) {
  return { physical, ...(cluster !== undefined ? { cluster, database } : {}) };
}

/** The tombstones of dropped collections (see CollectionDropsService for their life). */
@Injectable()
export class CollectionDropsRepository {
  constructor(
    @InjectModel(CollectionDropDocument.name)
    private readonly tombstones: Model<CollectionDropDocument>,
  ) {}

  /** Writes the tombstone of an entry; a concurrent drop of the same entry wrote the same one. */
  async write(entryId: string, native: NativeCollection, droppedAt: Date): Promise<void> {
    await orDuplicate(() =>
      this.tombstones.create({ _id: new Types.ObjectId(entryId), ...where(native), droppedAt }),
    );
  }

  /** Writes the tombstone of a moved collection's source. */
  async writeMovedAway(native: NativeCollection, droppedAt: Date): Promise<void> {
    await this.tombstones.create({ ...where(native), droppedAt, movedAway: true });
  }

  /** The oldest tombstones first, at most `limit`. */
  async oldest(limit: number): Promise<Tombstone[]> {
    const docs = await this.tombstones
      .find()
      .sort({ droppedAt: 1 })
      .limit(limit)
      .lean<CollectionDropDocument[]>()
      .exec();
    return docs.map((doc) => ({
      id: doc._id,
      physical: doc.physical,
      ...(doc.cluster !== undefined ? { cluster: doc.cluster, database: doc.database } : {}),
      droppedAt: doc.droppedAt,
      ...(doc.movedAway === true ? { movedAway: true as const } : {}),
    }));
  }

  async remove(id: Types.ObjectId): Promise<void> {
    await this.tombstones.deleteOne({ _id: id }).exec();
  }
}
