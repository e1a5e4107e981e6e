import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { claimSlot, firstFreeUnder, type SlotSpace } from '../common/mongo/slots';
import {
  namespaceFilter,
  tenantFilter,
  type Namespace,
  type Tenant,
} from '../common/tenancy/namespace';
import { WebhookDocument } from './webhook.schema';
import { WebhookSlotDocument } from './webhook-slot.schema';

/**
 * A slot whose webhook is not there is given back once it is this old: a create under way holds
 * it meanwhile (its insert follows the claim at once); one whose process died between the claim
 * and the insert keeps its place this long. The slot of a deleted webhook (left when its release
 * failed) is older than this, and is given back at the next claim.
 */
export const STALE_SLOT_MS = 10 * 60_000;

/** The webhook limit of each namespace, kept exact by unique slots (see the schema). */
@Injectable()
export class WebhookSlotsRepository implements OnModuleInit {
  constructor(
    @InjectModel(WebhookSlotDocument.name) private readonly slots: Model<WebhookSlotDocument>,
    @InjectModel(WebhookDocument.name) private readonly webhooks: Model<WebhookDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.slots.init();
  }

  /**
   * Claims a slot below `max` for the webhook about to be inserted as `webhook`; false when none
   * is left (nothing is written then). The namespace's webhooks made before slots existed get
   * one first, beyond the limit if need be, so that they count.
   */
  async claim(namespace: Namespace, webhook: Types.ObjectId, max: number): Promise<boolean> {
    const { unslotted } = await this.read(namespace, new Date());
    for (const id of unslotted) await claimSlot(this.space(namespace, id, Infinity), Infinity);
    return (await claimSlot(this.space(namespace, webhook, max), max)) !== null;
  }

  /** The slots held in the namespace: its webhooks, and those being created. */
  heldIn(namespace: Namespace): Promise<number> {
    return this.slots.countDocuments(namespaceFilter(namespace)).exec();
  }

  /** Gives back the slot of a webhook that was deleted, or not inserted. */
  async release(namespace: Namespace, webhook: Types.ObjectId): Promise<void> {
    await this.slots.deleteOne({ ...namespaceFilter(namespace), webhook }).exec();
  }

  /** Deletes a tenant's slots in every branch (an erasure). */
  async deleteTenant(tenant: Tenant): Promise<void> {
    await this.slots.deleteMany(tenantFilter(tenant)).exec();
  }

  /**
   * The namespace's slots as seen by a claim for `webhook`: the lowest free one under the limit
   * (firstFreeUnder: a limit lowered below the webhooks held lets none in).
   */
  private space(namespace: Namespace, webhook: Types.ObjectId, max: number): SlotSpace<true> {
    return {
      firstFree: async () => {
        const { held } = await this.read(namespace, new Date());
        return firstFreeUnder(held, max);
      },
      take: async (slot) => {
        const created = await orDuplicate(() =>
          this.slots.create({
            ...namespaceFilter(namespace),
            slot,
            webhook,
            createdAt: new Date(),
          }),
        );
        if (created !== DUPLICATE) return true;
        // The slot was taken, or (a webhook made before slots) another instance gave it one.
        const holder = await this.slots.exists({ ...namespaceFilter(namespace), webhook }).exec();
        return holder ? true : DUPLICATE;
      },
    };
  }

  /**
   * The slots held in the namespace, and its webhooks that hold none. A slot without its webhook
   * past STALE_SLOT_MS is deleted on the way; a younger one belongs to a create under way.
   */
  private async read(
    namespace: Namespace,
    now: Date,
  ): Promise<{ held: Set<number>; unslotted: Types.ObjectId[] }> {
    const [slots, webhooks] = await Promise.all([
      this.slots
        .find(namespaceFilter(namespace))
        .select({ slot: 1, webhook: 1, createdAt: 1 })
        .lean<WebhookSlotDocument[]>()
        .exec(),
      this.webhooks
        .find(namespaceFilter(namespace))
        .select({ _id: 1 })
        .lean<{ _id: Types.ObjectId }[]>()
        .exec(),
    ]);
    const existing = new Set(webhooks.map((w) => w._id.toHexString()));
    const held = new Set<number>();
    const slotted = new Set<string>();
    for (const doc of slots) {
      const id = doc.webhook.toHexString();
      if (!existing.has(id) && now.getTime() - doc.createdAt.getTime() > STALE_SLOT_MS) {
        await this.slots.deleteOne({ _id: doc._id, createdAt: doc.createdAt }).exec();
      } else {
        held.add(doc.slot);
        slotted.add(id);
      }
    }
    return {
      held,
      unslotted: webhooks.map((w) => w._id).filter((id) => !slotted.has(id.toHexString())),
    };
  }
}
