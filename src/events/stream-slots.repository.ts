import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { claimSlot, firstFreeUnder } from '../common/mongo/slots';
import { StreamSlotDocument } from './stream-slot.schema';
import type { StreamSlotStore } from './stream-slots';

/**
 * The keys' stream slots in `event_stream_slots` (see the schema). A claim reads the key's slots
 * once and inserts the first free place below the limit (firstFreeUnder: a lowered limit refuses
 * new streams only); a slot whose lease ran out is deleted on the way, by its own `_id`, so a
 * concurrent claim that already replaced it keeps its place.
 */
@Injectable()
export class StreamSlotsRepository implements OnModuleInit, StreamSlotStore {
  constructor(
    @InjectModel(StreamSlotDocument.name) private readonly slots: Model<StreamSlotDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.slots.init();
  }

  async claim(key: string, max: number, leaseUntil: Date): Promise<string | null> {
    let taken: Set<number> | null = null;
    return claimSlot<string>(
      {
        firstFree: async (refused) => {
          // A refused insert means another instance took that place since the read: counted
          // from memory, without a second read (claims of one key on one instance take turns).
          if (taken === null) taken = await this.taken(key, new Date());
          if (refused !== null) taken.add(refused);
          return firstFreeUnder(taken, max);
        },
        take: async (slot) => {
          const _id = new Types.ObjectId();
          const created = await orDuplicate(() =>
            this.slots.create({ _id, key, slot, leaseUntil }),
          );
          return created === DUPLICATE ? DUPLICATE : _id.toHexString();
        },
      },
      max,
    );
  }

  async renew(ids: readonly string[], leaseUntil: Date): Promise<string[]> {
    const objectIds = ids.map((id) => new Types.ObjectId(id));
    const { matchedCount } = await this.slots
      .updateMany({ _id: { $in: objectIds } }, { $set: { leaseUntil } })
      .exec();
    if (matchedCount >= ids.length) return [];
    const left = await this.slots
      .find({ _id: { $in: objectIds } })
      .select({ _id: 1 })
      .lean<{ _id: Types.ObjectId }[]>()
      .exec();
    const held = new Set(left.map((doc) => doc._id.toHexString()));
    return ids.filter((id) => !held.has(id));
  }

  async release(id: string): Promise<void> {
    await this.slots.deleteOne({ _id: new Types.ObjectId(id) }).exec();
  }

  /** Live slots of the key (tests and diagnostics). */
  countLive(key: string, now = new Date()): Promise<number> {
    return this.slots.countDocuments({ key, leaseUntil: { $gte: now } }).exec();
  }

  /** The places of the key's slots whose lease runs; the others are deleted on the way. */
  private async taken(key: string, now: Date): Promise<Set<number>> {
    const docs = await this.slots
      .find({ key })
      .select({ slot: 1, leaseUntil: 1 })
      .lean<StreamSlotDocument[]>()
      .exec();
    const taken = new Set<number>();
    for (const doc of docs) {
      if (doc.leaseUntil.getTime() >= now.getTime()) taken.add(doc.slot);
      else await this.slots.deleteOne({ _id: doc._id, leaseUntil: doc.leaseUntil }).exec();
    }
    return taken;
  }
}
