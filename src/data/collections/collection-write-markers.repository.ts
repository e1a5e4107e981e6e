import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionWriteMarkerDocument } from './collection-write-marker.schema';

/** The markers of writes under way to collections being moved (see the schema). */
@Injectable()
export class CollectionWriteMarkersRepository implements OnModuleInit {
  private readonly lifetimeMs: number;

  constructor(
    @InjectModel(CollectionWriteMarkerDocument.name)
    private readonly markers: Model<CollectionWriteMarkerDocument>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.lifetimeMs = config.lifecycle.dropGraceMs;
  }

  async onModuleInit(): Promise<void> {
    await this.markers.init();
  }

  /** Marks a write to `entry` under way; the marker's id. */
  async begin(entry: string): Promise<string> {
    const _id = new Types.ObjectId();
    await this.markers.create({ _id, entry, startedAt: new Date() });
    return _id.toHexString();
  }

  async end(marker: string): Promise<void> {
    await this.markers.deleteOne({ _id: new Types.ObjectId(marker) }).exec();
  }

  /** Whether a write to `entry` is under way (markers older than the longest request aside). */
  async anyUnderWay(entry: string): Promise<boolean> {
    const since = new Date(Date.now() - this.lifetimeMs);
    const found = await this.markers
      .findOne({ entry, startedAt: { $gte: since } }, { _id: 1 })
      .lean()
      .exec();
    return found !== null;
  }

  /** Removes markers older than the longest request (their requests died). */
  async removeExpired(): Promise<void> {
    await this.markers
      .deleteMany({ startedAt: { $lt: new Date(Date.now() - this.lifetimeMs) } })
      .exec();
  }
}
