import { Injectable } from '@nestjs/common';
import { DatabaseUnavailableError, type DomainError } from '../../../common/errors';
import { DUPLICATE } from '../../../common/mongo/duplicate';
import { claimSlot, lowestFree } from '../../../common/mongo/slots';
import type { Tenant } from '../../../common/tenancy/namespace';
import { PlanLimitExceededError, TenantLimits, type ActiveLimits } from '../../../plans';
import { ItemQuotaExceededError } from '../../data.errors';
import type { NativeCollection } from '../../storage/tenant-storage';
import { ItemsRepository } from '../items.repository';
import { ItemPlaceRepository } from './item-place.repository';
import { heldAbove, nextPlace, PLACE_GRACE_MS, surplusPlaces, type HeldPlace } from './item-places';

/** A place a create holds in its collection's item quota: given back when no item is written. */
export interface ItemPlace {
  target: NativeCollection;
  place: HeldPlace;
}

/** Ids read per round while placing the items of a collection that has none placed. */
const ADOPT_BATCH = 500;

/**
 * `itemsPerCollection` (a plan's, else MAX_ITEMS_PER_COLLECTION), exact across instances: every
 * item of a limited collection holds one of its places, and a create inserts its item only after
 * it took one (item-place.repository.ts: a unique `_id` per place, atomic on MongoDB and FerretDB
 * alike, where counting and then inserting is not). With no limit nothing is read or written.
 *
 * - A create takes the lowest free place while fewer than the limit are held, and gives it back
 *   when its item is not written; a delete gives its items' places back at once.
 * - Items stored while the collection had no limit hold no place: a create that finds more items
 *   (collection statistics) than places first gives each of them one, beyond the limit if need be.
 * - A limit lowered below the places held (a downgrade) refuses every create until the places
 *   held fall below it; a create that took a free low place while places above the limit were
 *   held counts the places again and gives its own back when they are over the limit.
 * - Places whose item does not exist (a create that died before its insert, an item deleted while
 *   the tenant had no limit) are taken back PLACE_GRACE_MS after they were taken, when a create
 *   finds every place held.
 */
@Injectable()
export class ItemLimits {
  constructor(
    private readonly limits: TenantLimits,
    private readonly places: ItemPlaceRepository,
    private readonly items: ItemsRepository,
  ) {}

  /** Whether the tenant's collections have an item limit (creates then take places one by one). */
  async limited(tenant: Tenant): Promise<boolean> {
    return (await this.limits.of(tenant)).limits.itemsPerCollection !== null;
  }

  /**
   * Takes a place for the item `itemId` about to be created in `target`, or throws the refusal
   * (ITEM_QUOTA_EXCEEDED, or PLAN_LIMIT_EXCEEDED under a plan). Null: the tenant has no limit.
   */
  async take(
    tenant: Tenant,
    target: NativeCollection,
    itemId: string,
    now = new Date(),
  ): Promise<ItemPlace | null> {
    const active = await this.limits.of(tenant);
    const max = active.limits.itemsPerCollection;
    if (max === null) return null;
    // The count before the places: a create takes its place before it inserts its item, so
    // every item counted has its place among those read after. Read the other way round, a
    // concurrent create's item would look unplaced, and be placed twice.
    const stored = await this.items.estimatedCount(target);
    let held = await this.places.held(target);
    if (stored > held.length) held = await this.adopt(target, now);
    for (let repaired = false; ; repaired = true) {
      let first = true;
      const place = await claimSlot<HeldPlace>(
        {
          firstFree: async () => {
            if (!first) held = await this.places.held(target);
            first = false;
            return nextPlace(held, max);
          },
          take: (slot) => this.places.take(target, slot, itemId, now),
        },
        max,
      );
      if (place) {
        // Places above the limit: it was lowered below what is held. Of creates that took free
        // low places meanwhile, the last to count sees every one of them.
        if (!heldAbove(held, max)) return { target, place };
        const count = (await this.places.held(target)).length;
        if (count <= max) return { target, place };
        await this.places.release(target, place);
        throw refusal(active, max, count - 1);
      }
      if (repaired || !(await this.repair(target, held, now)))
        throw refusal(active, max, held.length);
      held = await this.places.held(target);
    }
  }

  /**
   * Refuses to insert with a place past half its grace (a database so slow that a create meeting
   * a full collection may soon take the place back): it is given back, and the request is a 503.
   */
  async assertInsertable(taken: ItemPlace | null, now = Date.now()): Promise<void> {
    if (!taken || now - taken.place.claimedAt.getTime() < PLACE_GRACE_MS / 2) return;
    await this.giveBack(taken);
    throw new DatabaseUnavailableError();
  }

  /** Gives back the place of a create whose item was not written. */
  async giveBack(taken: ItemPlace | null): Promise<void> {
    if (taken) await this.places.release(taken.target, taken.place);
  }

  /**
   * Gives back the places of items just deleted. Without a limit nothing is written: places left
   * by such deletes are taken back after their grace, once a limit applies again.
   */
  async deleted(tenant: Tenant, target: NativeCollection, ids: readonly string[]): Promise<void> {
    if (ids.length === 0 || !(await this.limited(tenant))) return;
    await this.places.releaseItems(target, ids);
  }

  /**
   * Gives every stored item that holds no place one (numbers beyond the limit if need be), and
   * answers the places held then. Each page of ids is checked against the places read after it:
   * an item a concurrent create stored meanwhile has its place by then, and is not placed again.
   * Two creates doing this at once may still place an item twice: that only refuses more, and
   * `repair` takes the second place back.
   */
  private async adopt(target: NativeCollection, now: Date): Promise<HeldPlace[]> {
    for (let after: string | null = null; ;) {
      const ids = await this.items.findMatchingIds(
        target,
        {
          scope: null,
          conditions:
            after === null ? [] : [{ kind: 'range', path: '_id', op: 'gt', value: after }],
        },
        ADOPT_BATCH,
        { inIdOrder: true },
      );
      const held = await this.places.held(target);
      const placed = new Set(held.map((place) => place.itemId));
      const taken = new Set(held.map((place) => place.slot));
      for (const id of ids.filter((candidate) => !placed.has(candidate))) {
        for (;;) {
          const slot = lowestFree(taken);
          taken.add(slot);
          if ((await this.places.take(target, slot, id, now)) !== DUPLICATE) break;
        }
      }
      if (ids.length < ADOPT_BATCH) break;
      after = ids.at(-1) ?? null;
    }
    return this.places.held(target);
  }

  /** Takes back the places that hold nothing (surplusPlaces); whether there were any. */
  private async repair(
    target: NativeCollection,
    held: readonly HeldPlace[],
    now: Date,
  ): Promise<boolean> {
    const old = held.filter((place) => now.getTime() - place.claimedAt.getTime() >= PLACE_GRACE_MS);
    if (old.length === 0) return false;
    const existing = new Set<string>();
    const ids = [...new Set(old.map((place) => place.itemId))];
    for (let at = 0; at < ids.length; at += ADOPT_BATCH)
      for (const id of await this.items.existingIds(target, ids.slice(at, at + ADOPT_BATCH)))
        existing.add(id);
    const surplus = surplusPlaces(held, existing, now.getTime());
    for (const place of surplus) await this.places.release(target, place);
    return surplus.length > 0;
  }
}

/** The refusal of a create past the limit: the plan's, or the deployment's without one. */
function refusal(active: ActiveLimits, max: number, usage: number): DomainError {
  return active.plan
    ? new PlanLimitExceededError('itemsPerCollection', max, usage, active.plan.name)
    : new ItemQuotaExceededError(max, usage);
}
