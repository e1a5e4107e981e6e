import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type QueryFilter, type Model } from 'mongoose';
import { APP_CONFIG, type AppConfig } from '../config';
import { MoveWriteMarkerDocument } from './move-write-marker.schema';

/**
 * The markers of writes under way to what tenant moves copy (see the schema). Each instance
 * renews the markers of its own writes under way every quarter of their lifetime
 * (COLLECTION_DROP_GRACE_MS), so that a write that takes longer than that still holds a move's
 * pause; only the marker of an instance that stopped renewing (it died, or lost the database for
 * the whole lifetime) stops counting.
 */
@Injectable()
export class MoveWriteMarkers implements OnModuleInit, OnModuleDestroy {
  private readonly lifetimeMs: number;
  /** This instance's markers of writes under way. */
  private readonly live = new Set<string>();
  private renewal: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    @InjectModel(MoveWriteMarkerDocument.name)
    private readonly markers: Model<MoveWriteMarkerDocument>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.lifetimeMs = config.lifecycle.dropGraceMs;
  }

  async onModuleInit(): Promise<void> {
    await this.markers.init();
    this.renewal = setInterval(() => void this.renew(), Math.max(1, this.lifetimeMs / 4));
    this.renewal.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.renewal);
  }

  /** Marks a write to `target` under way; the marker's id. */
  async begin(target: string): Promise<string> {
    const _id = new Types.ObjectId();
    const marker = _id.toHexString();
    const now = new Date();
    this.live.add(marker);
    try {
      await this.markers.create({ _id, target, startedAt: now, aliveAt: now });
    } catch (error) {
      this.live.delete(marker);
      throw error;
    }
    return marker;
  }

  async end(marker: string): Promise<void> {
    this.live.delete(marker);
    await this.markers.deleteOne({ _id: new Types.ObjectId(marker) }).exec();
  }

  /** Whether a write to `target` is under way (markers no instance renews any more aside). */
  async anyUnderWay(target: string): Promise<boolean> {
    const found = await this.markers
      .findOne({ target, ...this.alive() }, { _id: 1 })
      .lean()
      .exec();
    return found !== null;
  }

  /** Removes the markers no instance renews any more (their requests died). */
  async removeExpired(): Promise<void> {
    await this.markers.deleteMany({ $nor: [this.alive()] }).exec();
  }

  /** Renews this instance's markers of writes under way; one renewal at a time. */
  private async renew(): Promise<void> {
    if (this.renewing || this.live.size === 0) return;
    this.renewing = true;
    try {
      const ids = [...this.live].map((marker) => new Types.ObjectId(marker));
      await this.markers
        .updateMany({ _id: { $in: ids } }, { $set: { aliveAt: new Date() } })
        .exec();
    } catch {
      // The next round tries again; a marker not renewed for its lifetime stops counting.
    } finally {
      this.renewing = false;
    }
  }

  /** Markers renewed within their lifetime (one written before renewals: started within it). */
  private alive(): QueryFilter<MoveWriteMarkerDocument> {
    const since = new Date(Date.now() - this.lifetimeMs);
    return {
      $or: [
        { aliveAt: { $gte: since } },
        { aliveAt: { $exists: false }, startedAt: { $gte: since } },
      ],
    };
  }
}
