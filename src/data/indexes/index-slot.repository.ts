import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../../common/mongo/duplicate';
import { claimSlot, firstFreeUnder, type SlotSpace } from '../../common/mongo/slots';
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
   * slots existed get one here, beyond the quota if need be), and claims without an index past
   * STALE_CLAIM_MS are dropped.
   */
  async claim(
    physical: string,
    name: string,
    max: number,
    nativeNames: readonly string[],
    now = new Date(),
  ): Promise<SlotClaim> {
    const native = new Set(nativeNames);
    const held = await this.held(physical, native, now);
    if (held.has(name)) return 'held';
    for (const unheld of [...native].filter((n) => !held.has(n))) {
      await claimSlot(this.space(physical, unheld, Infinity, native, now), Infinity);
    }
    return (await claimSlot(this.space(physical, name, max, native, now), max)) ?? 'full';
  }

  /** The slots held in a collection: its indexes, and those being built. */
  heldIn(physical: string): Promise<number> {
    return this.slots.countDocuments({ physical }).exec();
  }

  /** Deletes every slot of a dropped collection. */
  async deleteForCollection(physical: string): Promise<void> {
    await this.slots.deleteMany({ physical }).exec();
  }

  /** Gives back the slot of an index that was not built, or was dropped. */
  async release(physical: string, name: string): Promise<void> {
    await this.slots.deleteOne({ physical, name }).exec();
  }

  /**
   * The slots of one collection as seen by a claim for `name`. Slots are given back when an index
   * is dropped, so a claim starts at the lowest free one. A refused insert may also mean that a
   * concurrent request claimed the same name (unique per collection): then the index is theirs
   * to build.
   */
  private space(
    physical: string,
    name: string,
    max: number,
    native: ReadonlySet<string>,
    now: Date,
  ): SlotSpace<SlotClaim> {
    return {
      firstFree: async () => {
        const held = await this.held(physical, native, now);
        // A lowered limit can leave more holders than places: then nothing new fits.
        return firstFreeUnder(new Set(held.values()), max);
      },
      take: async (slot) => {
        const created = await orDuplicate(() => this.slots.create({ physical, name, slot }));
        if (created !== DUPLICATE) return 'claimed';
        const holder = await this.slots.exists({ physical, name }).exec();
        return holder ? 'held' : DUPLICATE;
      },
    };
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
