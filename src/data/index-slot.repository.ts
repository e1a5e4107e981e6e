import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { IndexSlotDocument } from './index-slot.schema';

/**
 * A slot claimed for an index that never appeared (the process died between the claim and the
 * build) is given back after this long. Index builds that take longer keep their slot, because
 * an index being built is listed by the server.
 */
export const STALE_CLAIM_MS = 10 * 60_000;

export type SlotClaim =
  /** This request holds a new slot for the name: build the index, or release on failure. */
  | 'claimed'
  /** The name holds a slot already (a concurrent request is creating the same index). */
  | 'held'
  /** Every place in the quota is taken. */
  | 'full';

/** The index quota of each physical collection, kept exact by unique slots (see the schema). */
@Injectable()
export class IndexSlotRepository implements OnModuleInit {
  constructor(
    @InjectModel(IndexSlotDocument.name) private readonly slots: Model<IndexSlotDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.slots.init();
  }

  /**
   * Claims a slot below `max` for `name`. `nativeNames` are the collection's indexes (without
   * `_id_`) as the server lists them now: each of them holds a slot too (indexes made before
   * slots existed get one here), and claims without an index past STALE_CLAIM_MS are dropped.
   */
  async claim(
    physical: string,
    name: string,
    max: number,
    nativeNames: readonly string[],
    now = new Date(),
  ): Promise<SlotClaim> {
    const native = new Set(nativeNames);
    // Every failed insert means another claim took the slot, so this ends within a few rounds.
    for (let round = 0; round <= max + native.size; round += 1) {
      const held = await this.held(physical, native, now);
      if (held.has(name)) return 'held';
      const unheld = [...native].filter((n) => !held.has(n));
      // An index without a slot (made before slots existed) takes the lowest free one first.
      const [claimant, limit] = unheld.length > 0 ? [unheld[0] as string, Infinity] : [name, max];
      // A lowered MAX_INDEXES can leave more holders than places: then nothing new fits.
      if (claimant === name && held.size >= max) return 'full';
      const slot = lowestFree(new Set(held.values()));
      if (slot >= limit) return 'full';
      const created = await orDuplicate(() =>
        this.slots.create({ physical, name: claimant, slot }),
      );
      if (created !== DUPLICATE && claimant === name) return 'claimed';
    }
    return 'full';
  }

  /** Gives back the slot of an index that was not built, or was dropped. */
  async release(physical: string, name: string): Promise<void> {
    await this.slots.deleteOne({ physical, name }).exec();
  }

  /** name → slot of the collection's live claims; stale ones are deleted on the way. */
  private async held(
    physical: string,
    native: ReadonlySet<string>,
    now: Date,
  ): Promise<Map<string, number>> {
    const docs = await this.slots
      .find({ physical })
      .select({ name: 1, slot: 1, createdAt: 1 })
      .lean<IndexSlotDocument[]>()
      .exec();
    const held = new Map<string, number>();
    for (const doc of docs) {
      if (!native.has(doc.name) && now.getTime() - doc.createdAt.getTime() > STALE_CLAIM_MS) {
        await this.slots.deleteOne({ _id: doc._id, createdAt: doc.createdAt }).exec();
      } else {
        held.set(doc.name, doc.slot);
      }
    }
    return held;
  }
}

function lowestFree(taken: ReadonlySet<number>): number {
  let slot = 0;
  while (taken.has(slot)) slot += 1;
  return slot;
}
