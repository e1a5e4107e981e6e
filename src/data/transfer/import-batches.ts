import { Inject, Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { tenantOf, type CustomerPrincipal } from '../../auth';
import { DomainError } from '../../common/errors';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import { toItemJson } from '../items/dto/data-item.dto';
import { ItemEvents } from '../items/item-events';
import { ItemsRepository, newStoredItem } from '../items/items.repository';
import type { StoredItem } from '../storage/tenant-storage';
import { stampOwner } from '../items/items.service';
import type { NewItemRequest } from '../query/data-requests';
import { ItemExpiry } from '../rules/expiry/item-expiry';
import type { SchemaError } from '../rules/schema/item-schemas';
import { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import { TransferItemsRepository } from './transfer-items.repository';
import { accessPlanOf, type AccessPlan } from '../access/access-plan';
import { outsideRule, refuseProtectedItem, visibleWarnings } from '../items/item-access';
import { APP_CONFIG, type AppConfig } from '../../config';
import { wordsFor } from '../search/search-rule';
import { ItemLimits } from '../items/limits/item-limits.service';

/**
 * What became of one item of a batch: written, refused by a rule, or left to be written alone
 * (a unique index refused it: ItemsService.create names the item it collides with, an upsert
 * replaces it).
 */
export type BatchItemResult =
  { created: string; warnings: SchemaError[] } | { refused: DomainError } | { alone: true };

/**
 * Creates the items of consecutive import lines of one collection together: each under the
 * rules ItemsService.create applies to an item without a uniqueField claim (owner, schema, an
 * expired holder of its `_id` goes first), then one change-feed intent, ordered inserts and one
 * append of events for all of them. The database sees a handful of commands per batch instead
 * of as many per item.
 */
@Injectable()
export class ImportBatches {
  constructor(
    private readonly schema: SchemaEnforcement,
    private readonly expiry: ItemExpiry,
    private readonly itemEvents: ItemEvents,
    private readonly items: TransferItemsRepository,
    private readonly stored: ItemsRepository,
    private readonly itemLimits: ItemLimits,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Creates the items of `requests` (all of `collection`, whose entry `target` passed its move
   * gate, with one ownerField, none with a uniqueField but `_id`), answering each one's result in their order. `replacing` (an upsert):
   * an item whose `_id` is stored already is left to be written alone at once.
   */
  async create(
    principal: CustomerPrincipal,
    collection: string,
    target: RegisteredCollection,
    requests: readonly NewItemRequest[],
    { replacing }: { replacing: boolean },
  ): Promise<BatchItemResult[]> {
    // Under an item limit each item takes its place in the quota alone (ItemsService.createIn),
    // so that a line past the limit is refused by name and the ones before it are written.
    if (await this.itemLimits.limited(tenantOf(principal)))
      return requests.map(() => ({ alone: true }));
    const results: BatchItemResult[] = new Array<BatchItemResult>(requests.length);
    const writes: { index: number; item: StoredItem; warnings: SchemaError[]; kept: boolean }[] =
      [];
    const now = new Date();
    const kept = requests.flatMap((request) => (request.id === null ? [] : [request.id]));
    const present =
      replacing && kept.length > 0 ? await this.stored.existingIds(target, kept) : null;
    const checked = this.schema.applies(target);
    let plan: AccessPlan | null = null;
    requests.forEach((request, index) => {
      if (request.id !== null && present?.has(request.id)) {
        results[index] = { alone: true };
        return;
      }
      stampOwner(principal, request);
      // One ownerField for the batch: one access plan.
      plan ??= accessPlanOf(principal, target, request.ownerField);
      const id = request.id ?? new Types.ObjectId().toHexString();
      const times = request.imported?.times ?? { createdAt: now, updatedAt: now };
      let item: StoredItem;
      let warnings: SchemaError[] = [];
      try {
        // Under a search configuration its word list goes into the same insert (413 past the
        // cap: that line is refused, the others are written).
        const maxWords = this.config.limits.searchMaxWordsPerItem;
        item = newStoredItem(id, request.item, times, wordsFor(target, request.item, maxWords));
        // The access rules as for a lone create: no protected field, inside the create rule.
        refuseProtectedItem(plan, request.item);
        if (!plan.create.matches(item)) throw outsideRule('create');
        if (checked)
          warnings = visibleWarnings(
            plan,
            this.schema.enforce(target, request.item, request.ownerField),
          );
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        results[index] = { refused: error };
        return;
      }
      writes.push({ index, item, warnings, kept: request.id !== null });
    });
    if (writes.length === 0) return results;
    if (target.rules.expiry) {
      const where = { tenant: tenantOf(principal), branch: principal.branch, entry: target };
      // An expired item holds its `_id` no more: it goes first (as ItemsService.create does).
      for (const { item, kept } of writes)
        if (kept) await this.expiry.releaseHeld(where, item._id, null);
    }
    const ownerField = (requests[0] as NewItemRequest).ownerField;
    const items = writes.map((write) => write.item);
    const refused = new Set<number>();
    const change = await this.itemEvents.beginCreate(
      principal,
      collection,
      items.map((item) => item._id),
      ownerField,
    );
    try {
      // Ordered: what went in is a prefix; the refused item is left for a write of its own.
      let done = 0;
      while (done < items.length) {
        const { inserted, refused: stopped } = await this.items.insertInOrder(
          target,
          items.slice(done),
        );
        done += inserted;
        if (!stopped) break;
        refused.add(done);
        done += 1;
      }
    } catch (error) {
      await change.failed(error);
      throw error;
    }
    await change.commit(items.filter((_, at) => !refused.has(at)).map((item) => toItemJson(item)));
    writes.forEach(({ index, item, warnings }, at) => {
      results[index] = refused.has(at) ? { alone: true } : { created: item._id, warnings };
    });
    return results;
  }
}
