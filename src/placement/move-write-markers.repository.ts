import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { APP_CONFIG, type AppConfig } from '../config';
import { MoveWriteMarkerDocument } from './move-write-marker.schema';

/** The markers of writes under way to what tenant moves copy (see the schema). */
@Injectable()
export class MoveWriteMarkers implements OnModuleInit {
  private readonly lifetimeMs: number;

  constructor(
    @InjectModel(MoveWriteMarkerDocument.name)
    private readonly markers: Model<MoveWriteMarkerDocument>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.lifetimeMs = config.lifecycle.dropGraceMs;
  }

  async onModuleInit(): Promise<void> {
    await this.markers.init();
  }

  /** Marks a write to `target` under way; the marker's id. */
  async begin(target: string): Promise<string> {
    const _id = new Types.ObjectId();
    await this.markers.create({ _id, target, startedAt: new Date() });
    return _id.toHexString();
  }

  async end(marker: string): Promise<void> {
    await this.markers.deleteOne({ _id: new Types.ObjectId(marker) }).exec();
  }

  /** Whether a write to `target` is under way (markers older than the longest request aside). */
  async anyUnderWay(target: string): Promise<boolean> {
    const since = new Date(Date.now() - this.lifetimeMs);
    const found = await this.markers
      .findOne({ target, startedAt: { $gte: since } }, { _id: 1 })
      .lean()
      .exec();
    return found !== null;
  }

  /** When the oldest write to `target` still under way started; null when none is. */
  async oldestUnderWay(target: string): Promise<Date | null> {
    const since = new Date(Date.now() - this.lifetimeMs);
    const found = await this.markers
      .findOne({ target, startedAt: { $gte: since } }, { startedAt: 1 })
      .sort({ startedAt: 1 })
      .lean<{ startedAt: Date }>()
      .exec();
    return found?.startedAt ?? null;
  }

  /** Removes markers older than the longest request (their requests died). */
  async removeExpired(): Promise<void> {
    await this.markers
      .deleteMany({ startedAt: { $lt: new Date(Date.now() - this.lifetimeMs) } })
      .exec();
  }
}
