import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { AuthFailureDocument } from './auth-failure.schema';
import { slotId, slotIdRange, type SlotStore } from './auth-failure.budget';

/** The auth_failures collection; only failed authentications reach it. */
@Injectable()
export class AuthFailureRepository implements OnModuleInit {
  constructor(
    @InjectModel(AuthFailureDocument.name) private readonly failures: Model<AuthFailureDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.failures.init();
  }

  /** The slots of one address and window; `_id` range queries use the `_id` index. */
  slotsOf(address: string, windowStart: number, windowEnd: number): SlotStore {
    const { from, to } = slotIdRange(address, windowStart);
    const end = new Date(windowEnd);
    return {
      count: () => this.failures.countDocuments({ _id: { $gte: from, $lt: to } }).exec(),
      tryInsert: async (slot) => {
        const inserted = await orDuplicate(() =>
          this.failures.create({ _id: slotId(address, windowStart, slot), windowEnd: end }),
        );
        return inserted !== DUPLICATE;
      },
    };
  }

  /** Deletes the failures of every window that ended at or before `end`. */
  async deleteWindowsEndedBy(end: Date): Promise<void> {
    await this.failures.deleteMany({ windowEnd: { $lte: end } }).exec();
  }
}
