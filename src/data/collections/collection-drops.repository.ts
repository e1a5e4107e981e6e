import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { orDuplicate } from '../../common/mongo/duplicate';
import { CollectionDropDocument } from './collection-drop.schema';

export interface Tombstone {
  /** The `_id` of the registry entry that was dropped. */
  id: Types.ObjectId;
  physical: string;
  droppedAt: Date;
}

/** The tombstones of dropped collections (see CollectionDropsService for their life). */
@Injectable()
export class CollectionDropsRepository {
  constructor(
    @InjectModel(CollectionDropDocument.name)
    private readonly tombstones: Model<CollectionDropDocument>,
  ) {}

  /** Writes the tombstone of an entry; a concurrent drop of the same entry wrote the same one. */
  async write(entryId: string, physical: string, droppedAt: Date): Promise<void> {
    await orDuplicate(() =>
      this.tombstones.create({ _id: new Types.ObjectId(entryId), physical, droppedAt }),
    );
  }

  /** The oldest tombstones first, at most `limit`. */
  async oldest(limit: number): Promise<Tombstone[]> {
    const docs = await this.tombstones
      .find()
      .sort({ droppedAt: 1 })
      .limit(limit)
      .lean<CollectionDropDocument[]>()
      .exec();
    return docs.map((doc) => ({ id: doc._id, physical: doc.physical, droppedAt: doc.droppedAt }));
  }

  async remove(id: Types.ObjectId): Promise<void> {
    await this.tombstones.deleteOne({ _id: id }).exec();
  }
}
