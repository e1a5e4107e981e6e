import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { orDuplicate } from '../common/mongo/duplicate';
import type { SlotSpace } from '../common/mongo/slots';
import { AuthFailureDocument } from './auth-failure.schema';
import { slotId, slotIdRange } from './auth-failure.budget';

/** The auth_failures collection; only failed authentications reach it. */
@Injectable()
export class AuthFailureRepository implements OnModuleInit {
  constructor(
    @InjectModel(AuthFailureDocument.name) private readonly failures: Model<AuthFailureDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.failures.init();
  }

  /**
   * The slots of one address and window. Failures are never given back, so the number of slots
   * is where a claim starts; `_id` range queries use the `_id` index. A refused insert moves on
   * to the next slot without counting again: only failures reach this, and a budget is small.
   */
  slotsOf(address: string, windowStart: number, windowEnd: number): SlotSpace<number> {
    const { from, to } = slotIdRange(address, windowStart);
    const end = new Date(windowEnd);
    return {
      firstFree: async (refused) =>
        refused === null
          ? this.failures.countDocuments({ _id: { $gte: from, $lt: to } }).exec()
          : refused + 1,
      take: (slot) =>
        orDuplicate(async () => {
          await this.failures.create({ _id: slotId(address, windowStart, slot), windowEnd: end });
          return slot;
        }),
    };
  }

  /** Deletes the failures of every window that ended at or before `end`. */
  async deleteWindowsEndedBy(end: Date): Promise<void> {
    await this.failures.deleteMany({ windowEnd: { $lte: end } }).exec();
  }
}
