import { NO_PRECONDITION, type IfMatch } from '../../common/http/etag';
import { Injectable } from '@nestjs/common';
import { tenantOf, type CustomerPrincipal } from '../../auth';
import {
  DatabaseUnavailableError,
  DomainError,
  isDatabaseUnavailable,
  ValidationFailedError,
  type ProblemMembers,
} from '../../common/errors';
import { DUPLICATE } from '../../common/mongo/duplicate';
import { CollectionsService } from '../collections/collections.service';
import { ownerMatchScope, type ItemMatch } from '../query/data-query';
import type { BulkItemInput, ItemChangeRequest, ItemRemovalRequest } from '../query/data-requests';
import { DuplicateItemError } from '../data.errors';
import { ItemsRepository } from './items.repository';
import { assertOwnerFieldKept } from './item-scope';
import { accessPlanOf, type AccessPlan } from '../access/access-plan';
import { refuseProtectedWrites } from '../access/protected-fields';
import {
  addressedMatch,
  bothScopes,
  outsideRule,
  ruleSeesWrite,
  sameAsRead,
  visibleWarnings,
} from './item-access';
import { ItemsService, newItemOf, type NewItem } from './items.service';
import { writesWords } from './item-writes.service';
import { toItemJson } from './dto/data-item.dto';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import { ItemEvents } from './item-events';
import { UniqueValuesService } from './unique/unique-values.service';
import type { UniqueClaim } from './unique/unique-claim.repository';
import type { NativeCollection, StoredItem } from '../storage/tenant-storage';
import type { SchemaError } from '../rules/schema/item-schemas';
import { CheckedUpdates } from '../rules/schema/checked-updates';
import { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import type { Warned } from '../rules/schema/schema-warnings';
import { ItemLimits } from './limits/item-limits.service';

/** One item's outcome in a bulk create: its index in the request and what a lone POST would have answered. */
export type BulkItemResult =
  | { index: number; status: number; _id: string; warnings?: SchemaError[] }
  | { index: number; status: number; error: ProblemMembers };

/** Items created at once by one bulk request; bounded so one request cannot hold many connections. */
const BULK_CONCURRENCY = 8;

/** Ids read and written per round of a multi-item update or delete. */
const BATCH = 500;

/**
 * Writes of many items per request: bulk creates (each item under exactly the rules of a lone
 * POST, one item's failure not stopping the others) and filtered multi-item updates and deletes
 * (the owner scope of sub keys applies, as everywhere).
 */
@Injectable()
export class ItemBatchesService {
  constructor(
    private readonly collections: CollectionsService,
    private readonly items: ItemsRepository,
    private readonly single: ItemsService,
    private readonly uniqueValues: UniqueValuesService,
    private readonly itemEvents: ItemEvents,
    private readonly schema: SchemaEnforcement,
    private readonly checked: CheckedUpdates,
    private readonly itemLimits: ItemLimits,
  ) {}

  /**
   * POST /data/{c}/bulk: one write unit for all its items. Each item is checked first (owner,
   * uniqueField value: a failure is that item's result); then, when any item is left, the
   * collection's registry entry is read once and passes its move gate once, and the items are
   * created in it (ItemsService.createIn), BULK_CONCURRENCY at a time.
   */
  async createMany(
    principal: CustomerPrincipal,
    collection: string,
    inputs: BulkItemInput[],
  ): Promise<BulkItemResult[]> {
    const results: BulkItemResult[] = new Array<BulkItemResult>(inputs.length);
    const checked: { index: number; item: NewItem }[] = [];
    inputs.forEach((input, index) => {
      if ('refused' in input)
        results[index] = { index, status: input.refused.status, error: input.refused.members() };
      else
        try {
          checked.push({ index, item: newItemOf(principal, input.request) });
        } catch (error) {
          results[index] = failureOf(index, error);
        }
    });
    if (checked.length > 0)
      await this.collections.write(principal, collection, (found) =>
        this.createChecked(principal, collection, found, checked, results),
      );
    // The database failed every item: that is the request's answer (503 with Retry-After).
    if (results.every((r) => r.status === 503)) throw new DatabaseUnavailableError();
    return results;
  }

  /** Creates the checked items in the collection `found` (registered first when null). */
  private async createChecked(
    principal: CustomerPrincipal,
    collection: string,
    found: RegisteredCollection | null,
    checked: readonly { index: number; item: NewItem }[],
    results: BulkItemResult[],
  ): Promise<void> {
    let target: RegisteredCollection;
    try {
      target = found ?? (await this.collections.register(principal, collection));
    } catch (error) {
      // Every item would have met the same refusal (the quota, the database).
      for (const { index } of checked) results[index] = failureOf(index, error);
      return;
    }
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < checked.length) {
        const { index, item } = checked[next++] as { index: number; item: NewItem };
        results[index] = await this.createOne(principal, collection, target, index, item);
      }
    };
    await Promise.all(Array.from({ length: Math.min(BULK_CONCURRENCY, checked.length) }, worker));
  }

  private async createOne(
    principal: CustomerPrincipal,
    collection: string,
    target: RegisteredCollection,
    index: number,
    item: NewItem,
  ): Promise<BulkItemResult> {
    try {
      const { item: created, warnings } = await this.single.createIn(
        principal,
        collection,
        target,
        item,
      );
      return {
        index,
        status: 200,
        _id: created._id,
        ...(warnings.length > 0 ? { warnings } : {}),
      };
    } catch (error) {
      return failureOf(index, error);
    }
  }

  async updateMany(
    principal: CustomerPrincipal,
    collection: string,
    request: ItemChangeRequest,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<Warned<{ matched: number; modified: number }>> {
    refuseIfMatch(ifMatch);
    assertOwnerFieldKept(principal, request.values, request.ownerField);
    // One write unit: the collection read once and gated once for every round.
    return this.collections.write(principal, collection, async (target) => {
      if (!target) return { value: { matched: 0, modified: 0 }, warnings: [] };
      const plan = accessPlanOf(principal, target, request.ownerField);
      refuseProtectedWrites(plan, Object.keys(request.values));
      // The readable items the filter selects; outside the read rule an item is not matched.
      const match = addressedMatch(plan, null, request.conditions);
      // An update rule that is not the read rule, or that the values can move items out of, is
      // judged on every item before any is written (all or nothing), as a schema is; values
      // that write a search field go item by item too, each with its word list.
      const paths = Object.keys(request.values);
      const ruled = !sameAsRead(plan.read, plan.update) || ruleSeesWrite(plan.update, paths);
      if (this.schema.applies(target) || ruled || writesWords(target, paths))
        return visible(
          plan,
          await this.checked.updateMany(principal, collection, target, match, request, plan.update),
        );
      const now = new Date();
      const result = this.itemEvents.enabled
        ? await this.updateInRounds(principal, collection, target, match, request, now)
        : await this.items.updateMatching(target, match, request.values, now);
      if (result === DUPLICATE)
        throw new DuplicateItemError(
          'A unique index of the collection refuses the new values of a matching item; the items written before it keep their new values (MongoDB writes them one by one).',
        );
      // No schema: nothing to warn of.
      return { value: result, warnings: [] };
    });
  }

  /**
   * With the change feed on, a multi-item update goes in rounds of ids in `_id` order, so that
   * each round's intent names its items and its events carry each item as written.
   */
  private async updateInRounds(
    principal: CustomerPrincipal,
    collection: string,
    target: NativeCollection,
    match: ItemMatch,
    request: ItemChangeRequest,
    now: Date,
  ): Promise<{ matched: number; modified: number } | typeof DUPLICATE> {
    let matched = 0;
    let modified = 0;
    let after: string | null = null;
    for (;;) {
      const round: ItemMatch = {
        ...match,
        conditions:
          after === null
            ? match.conditions
            : [...match.conditions, { kind: 'range', path: '_id', op: 'gt', value: after }],
      };
      // Whole items, in the same one read: a live query judges each change by the item before.
      const before = await this.items.findInIdOrder(target, round, BATCH);
      const ids = before.map((item) => item._id);
      if (ids.length === 0) break;
      after = ids.at(-1) ?? null;
      const byIds: ItemMatch = {
        ...match,
        conditions: [{ kind: 'eq', path: '_id', anyOf: ids }, ...match.conditions],
      };
      const change = await this.itemEvents.beginUpdate(
        principal,
        collection,
        ids,
        request.ownerField,
      );
      let outcome: { matched: number; modified: number } | typeof DUPLICATE;
      let written: StoredItem[];
      try {
        outcome = await this.items.updateMatching(target, byIds, request.values, now);
        // The items this round wrote: those that carry its time now (read by id alone: the new
        // values may no longer match the filter).
        written = await this.items.findMatching(
          target,
          { scope: match.scope, conditions: [{ kind: 'eq', path: '_id', anyOf: ids }] },
          ids.length,
        );
      } catch (error) {
        await change.failed(error);
        throw error;
      }
      await change.commit({
        after: written
          .filter((item) => item._updatedAt.getTime() === now.getTime())
          .map((item) => toItemJson(item)),
        before,
      });
      if (outcome === DUPLICATE) return DUPLICATE;
      matched += outcome.matched;
      modified += outcome.modified;
      if (ids.length < BATCH) break;
    }
    return { matched, modified };
  }

  /**
   * Deletes in rounds: the ids of up to BATCH matching items, then those of them that still
   * match. uniqueField claims are given back for the ids that are gone, and only for those: an
   * item that stopped matching in between keeps its value's claim.
   */
  async deleteMany(
    principal: CustomerPrincipal,
    collection: string,
    request: ItemRemovalRequest,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<{ deleted: number }> {
    refuseIfMatch(ifMatch);
    // One write unit: the collection read once and gated once for every round.
    return this.collections.write(principal, collection, async (target) => {
      if (!target) return { deleted: 0 };
      const plan = accessPlanOf(principal, target, request.ownerField);
      const read = addressedMatch(plan, null, request.conditions).scope;
      // A readable matching item outside the delete rule refuses the whole delete (403); the
      // rule is also ANDed into every round's delete, so an item that moved out of it since
      // stays.
      if (!sameAsRead(plan.read, plan.delete)) {
        const outside = { filter: { $nor: [plan.delete.filter] } };
        const [refused] = await this.items.findMatchingIds(
          target,
          { scope: bothScopes(read, outside), conditions: request.conditions },
          1,
        );
        if (refused !== undefined) throw outsideRule('delete');
      }
      const match = { scope: bothScopes(read, plan.delete), conditions: request.conditions };
      return {
        deleted: await this.deleteMatching(
          principal,
          collection,
          target,
          match,
          request.ownerField,
        ),
      };
    });
  }

  /**
   * Deletes, in every collection of the caller's namespace in the request branch, the items whose
   * `ownerField` (checked by ownerFieldOf) holds `owner` (a deleted sub profile's accountId);
   * how many went.
   */
  async deleteOwnedEverywhere(
    principal: CustomerPrincipal,
    ownerField: string,
    owner: string,
  ): Promise<number> {
    const match: ItemMatch = {
      scope: ownerMatchScope({ field: ownerField, value: owner }),
      conditions: [],
    };
    let deleted = 0;
    for (const entry of await this.collections.registered(principal))
      deleted += await this.deleteMatching(principal, entry.name, entry, match, ownerField);
    return deleted;
  }

  /** Deletes the matching items in rounds of ids, giving back the claims of those that went. */
  private async deleteMatching(
    principal: CustomerPrincipal,
    collection: string,
    target: NativeCollection,
    match: ItemMatch,
    ownerField: string,
  ): Promise<number> {
    let deleted = 0;
    for (;;) {
      const ids = await this.items.findMatchingIds(target, match, BATCH);
      if (ids.length === 0) break;
      const change = await this.itemEvents.beginDelete(
        principal,
        collection,
        target,
        ids,
        ownerField,
      );
      let gone: readonly string[];
      let claims: readonly UniqueClaim[];
      try {
        claims = await this.uniqueValues.beforeDelete(target, ids);
        // The expiry sweep deletes items of this collection too: only deletes this one counted
        // are its own, or an item could be recorded twice.
        if (target.rules?.expiry) gone = await this.deleteEach(target, match, ids);
        else {
          await this.items.deleteMatchingIds(target, match, ids);
          const remaining = await this.items.existingIds(target, ids);
          gone = ids.filter((id) => !remaining.has(id));
        }
      } catch (error) {
        await change.failed(error);
        throw error;
      }
      await change.commit(gone);
      deleted += gone.length;
      await this.uniqueValues.afterDelete(claims, gone);
      await this.itemLimits.deleted(tenantOf(principal), target, gone);
      // Nothing went although the ids matched a moment ago: they changed since; stop here.
      if (gone.length === 0 || ids.length < BATCH) break;
    }
    return deleted;
  }

  /** Deletes the ids one by one: those this call deleted. */
  private async deleteEach(target: NativeCollection, match: ItemMatch, ids: string[]) {
    const gone: string[] = [];
    for (const id of ids) if (await this.items.deleteById(target, id, match)) gone.push(id);
    return gone;
  }
}

/** One item's failure as its result: a refusal, or the database failing; anything else throws. */
function failureOf(index: number, error: unknown): BulkItemResult {
  if (error instanceof DomainError) return { index, status: error.status, error: error.members() };
  if (isDatabaseUnavailable(error)) {
    const unavailable = new DatabaseUnavailableError();
    return { index, status: unavailable.status, error: unavailable.members() };
  }
  throw error;
}

/** A multi-item update's answer without warnings about the caller's protected fields. */
function visible<T>(plan: AccessPlan, warned: Warned<T>): Warned<T> {
  return { value: warned.value, warnings: visibleWarnings(plan, warned.warnings) };
}

/** If-Match names one representation: a write of many items has none to name. */
function refuseIfMatch(ifMatch: IfMatch): void {
  if (ifMatch.kind !== 'absent')
    throw new ValidationFailedError([
      { field: 'If-Match', message: 'goes with a single-item write, not with multi: true' },
    ]);
}
