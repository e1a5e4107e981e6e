import { Injectable } from '@nestjs/common';
import type { Tenant } from '../../../auth';
import type { ChangeScope } from '../../../events';
import type { RegisteredCollection } from '../../collections/collection-registry.repository';
import { CollectionWriteGate } from '../../collections/collection-write.gate';
import { ItemEvents } from '../../items/item-events';
import { UniqueValuesService } from '../../items/unique/unique-values.service';
import type { UniqueClaim } from '../../items/unique/unique-claim.repository';
import { ItemLimits } from '../../items/limits/item-limits.service';
import { ownerMatchScope, type ItemMatch, type OwnerScope } from '../../query/data-query';
import { type Condition } from '../../query/filter-operators';
import { DEFAULT_OWNER_FIELD } from '../../query/data.constants';
import { type JsonScalar } from '../../../common/json';
import { ExpiredItemsRepository } from './expired-items.repository';
import { withExpired } from './live-items';

/** Who deletes expired items, as the change feed names it. */
export const EXPIRY_ACTOR = { kind: 'system', id: 'expiry' } as const;

/** A collection with its namespace: where expired items are deleted and their events go. */
export interface ExpiringCollection {
  tenant: Tenant;
  branch: string;
  entry: RegisteredCollection;
}

/** Expired items of one create's `_id` and uniqueField value are looked for up to this many. */
const HOLDERS_AT_MOST = 100;

/**
 * Deletes expired items: each with exactly one `deleted` event whose actor is the service
 * (`{"kind":"system","id":"expiry"}`), and gives back the uniqueField values they claimed.
 * Exactly one, also when several instances expire one item at once: an item is deleted by its
 * `_id` alone, and only the delete the database counts records it. The events' owner is read
 * from `userId` (a collection has no owner field of its own; requests name one).
 */
@Injectable()
export class ItemExpiry {
  constructor(
    private readonly expired: ExpiredItemsRepository,
    private readonly itemEvents: ItemEvents,
    private readonly uniqueValues: UniqueValuesService,
    private readonly gate: CollectionWriteGate,
    private readonly itemLimits: ItemLimits,
  ) {}

  /**
   * Deletes up to `limit` items that match and have expired at `now`: how many were found, and
   * how many of them this call deleted (another instance may have taken some). A write of its
   * own (the expiry sweep's): once it found expired items it passes the collection's move gate
   * like any write, and deletes by the rule and location the sweep read.
   */
  expireMatching(
    where: ExpiringCollection,
    match: ItemMatch,
    limit: number,
    { now = Date.now(), stopped = () => false }: { now?: number; stopped?: () => boolean } = {},
  ): Promise<{ found: number; deleted: number }> {
    const { tenant, branch, entry } = where;
    return this.deleteExpired(where, match, limit, { now, stopped }, (deletes) =>
      this.gate.write(tenant, branch, entry.name, deletes),
    );
  }

  /**
   * Finds the expired items, then deletes them with their events; `gated` runs the deletes
   * (through the move gate, unless the caller's write unit passed it already).
   */
  private async deleteExpired(
    where: ExpiringCollection,
    match: ItemMatch,
    limit: number,
    { now, stopped }: { now: number; stopped: () => boolean },
    gated: <T>(deletes: () => Promise<T>) => Promise<T> = (deletes) => deletes(),
  ): Promise<{ found: number; deleted: number }> {
    const rule = where.entry.rules.expiry;
    if (!rule) return { found: 0, deleted: 0 };
    const stored = withExpired(where.entry);
    const ids = await this.expired.findIds(stored, rule, match, limit, now);
    if (ids.length === 0) return { found: 0, deleted: 0 };
    const { tenant, branch, entry } = where;
    const scope: ChangeScope = { tenant, branch, actor: EXPIRY_ACTOR };
    const { deleted: gone, claims } = await gated(async () => {
      const change = await this.itemEvents.beginDeleteIn(
        scope,
        entry.name,
        stored,
        ids,
        DEFAULT_OWNER_FIELD,
      );
      const deleted: string[] = [];
      let claims: readonly UniqueClaim[];
      try {
        claims = await this.uniqueValues.beforeDelete(stored, ids);
        for (const id of ids) {
          // Shutting down: what went is recorded, the rest waits for the next sweep.
          if (stopped()) break;
          if (await this.expired.deleteIfExpired(stored, rule, id, now)) deleted.push(id);
        }
      } catch (error) {
        await change.failed(error);
        throw error;
      }
      await change.commit(deleted);
      return { deleted, claims };
    });
    await this.uniqueValues.afterDelete(claims, gone);
    await this.itemLimits.deleted(tenant, stored, gone);
    return { found: ids.length, deleted: gone.length };
  }

  /**
   * Before a create: expired items that still hold its `_id`, or its uniqueField value in the
   * caller's scope, are deleted now (rather than at the next sweep), so that neither the value's
   * claim nor a unique index refuses the new item. Part of the create's write unit, which passed
   * the collection's move gate already (with `where.entry`, the entry it writes).
   */
  async releaseHeld(
    where: ExpiringCollection,
    id: string | null,
    unique: { scope: OwnerScope | null; field: string; value: JsonScalar } | null,
  ): Promise<void> {
    if (!where.entry.rules.expiry) return;
    const at = { now: Date.now(), stopped: () => false };
    if (id !== null) {
      const byId: Condition = { kind: 'eq', path: '_id', anyOf: [id] };
      await this.deleteExpired(where, { scope: null, conditions: [byId] }, 1, at);
    }
    if (unique !== null) {
      const byValue: Condition = { kind: 'eq', path: unique.field, anyOf: [unique.value] };
      const match = { scope: ownerMatchScope(unique.scope), conditions: [byValue] };
      await this.deleteExpired(where, match, HOLDERS_AT_MOST, at);
    }
  }
}
