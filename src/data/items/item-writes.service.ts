import { Inject, Injectable } from '@nestjs/common';
import { tenantOf, type CustomerPrincipal } from '../../auth';
import { PreconditionFailedError, type DomainError } from '../../common/errors';
import { ifMatchHolds, NO_PRECONDITION, type IfMatch } from '../../common/http/etag';
import { DUPLICATE, type Duplicate } from '../../common/mongo/duplicate';
import { FallbackWriteQueue } from '../../common/mongo/fallback-database';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionsService } from '../collections/collections.service';
import {
  AmbiguousMatchError,
  DuplicateItemError,
  ItemNotFoundError,
  WriteConflictError,
} from '../data.errors';
import { type ItemMatch } from '../query/data-query';
import { type Condition } from '../query/filter-operators';
import type { ItemChangeRequest, ItemRemovalRequest } from '../query/data-requests';
import { dataBudget, guardDocument } from '../query/json-guard';
import { type Guarded, type JsonBudget, type JsonObject } from '../../common/json';
import { applyArrayOperation, type ArrayOperation } from './array-operations';
import { toItemJson } from './dto/data-item.dto';
import { ItemEvents } from './item-events';
import { itemETag, revisionCondition, tagOf } from './item-revision';
import { assertOwnerFieldKept, type ItemAddress } from './item-scope';
import { accessPlanOf, type AccessPlan, type ItemScope } from '../access/access-plan';
import { refuseProtectedWrites, withoutProtected } from '../access/protected-fields';
import {
  addressedMatch,
  bothScopes,
  outsideRule,
  ruleSeesWrite,
  sameAsRead,
  updatedImage,
  visibleWarnings,
} from './item-access';
import { ItemsRepository, type HiddenMembers } from './items.repository';
import { searchRuleOf, touchesSearch, wordsFor } from '../search/search-rule';
import type { WrittenItem } from './items.service';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import { UniqueValuesService } from './unique/unique-values.service';
import type { UniqueClaim } from './unique/unique-claim.repository';
import type { NativeCollection, StoredItem } from '../storage/tenant-storage';
import { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import { afterSet } from '../rules/schema/after-set';
import { ItemLimits } from './limits/item-limits.service';
import { MODIFY_ROUNDS, writeKey } from './item-write-queue';

/**
 * The rules of changing stored items: which item a write selects (one, none or several), the
 * owner field a sub key may not change, the collection's access rules, and If-Match.
 *
 * Access rules (src/data/access/access-plan.ts, one plan per write unit): the item is selected
 * within the read rule (outside it, it is missing: 404); an update or delete outside its rule is
 * 403 ACCESS_RULE. When the rule is the read rule, or a filter on fields the update does not
 * write, it is ANDed into the one conditional write; otherwise the item is read, the rule judged
 * on it before and as it will be, and written only at the revision judged (changeAtRevision).
 * Answers leave protected fields out; events carry the whole item.
 *
 * Updates and deletes are one conditional write each (the match, the id, under If-Match the
 * revision; under a collection schema, the revision read and checked). FerretDB does not
 * re-check a filter at write time, so they are also queued per item in this process (`writes`):
 * one instance then never writes over an item that stopped matching its filter or its If-Match.
 * Several instances need MongoDB for that.
 */
@Injectable()
export class ItemWritesService {
  private readonly budget: JsonBudget;
  private readonly maxWords: number;

  constructor(
    private readonly writes: FallbackWriteQueue,
    private readonly collections: CollectionsService,
    private readonly items: ItemsRepository,
    private readonly uniqueValues: UniqueValuesService,
    private readonly itemEvents: ItemEvents,
    private readonly schema: SchemaEnforcement,
    private readonly itemLimits: ItemLimits,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.budget = dataBudget(config.limits);
    this.maxWords = config.limits.searchMaxWordsPerItem;
  }

  async update(
    principal: CustomerPrincipal,
    collection: string,
    indexName: string,
    indexValue: string,
    request: ItemChangeRequest,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<WrittenItem> {
    return this.updateOne(principal, collection, { indexName, indexValue }, request, ifMatch);
  }

  /** PUT /data/{c} without multi: the one item the body filter selects. */
  async updateWhere(
    principal: CustomerPrincipal,
    collection: string,
    request: ItemChangeRequest,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<WrittenItem> {
    return this.updateOne(principal, collection, null, request, ifMatch);
  }

  /**
   * One write unit: authorise (the owner field a sub key keeps) → the collection's registry entry
   * read once and passed through its move gate once → `updateIn`.
   */
  private async updateOne(
    principal: CustomerPrincipal,
    collection: string,
    address: ItemAddress,
    request: ItemChangeRequest,
    ifMatch: IfMatch,
  ): Promise<WrittenItem> {
    assertOwnerFieldKept(principal, request.values, request.ownerField);
    return this.collections.write(principal, collection, async (target) => {
      const plan = accessPlanOf(principal, target, request.ownerField);
      refuseProtectedWrites(plan, Object.keys(request.values));
      const match = addressedMatch(plan, address, request.conditions);
      const written = await this.updateIn(
        principal,
        collection,
        target,
        plan,
        address,
        match,
        request,
        ifMatch,
      );
      return answered(plan, written);
    });
  }

  /**
   * The one item selected in `target`, updated: under a schema at the revision read and checked
   * (changeAtRevision); otherwise record the feed's intent → write (conditional) → record the
   * events → answer the item with its JSON, made once for both.
   */
  private async updateIn(
    principal: CustomerPrincipal,
    collection: string,
    target: RegisteredCollection | null,
    plan: AccessPlan,
    address: ItemAddress,
    match: ItemMatch,
    { values, ownerField }: ItemChangeRequest,
    ifMatch: IfMatch,
  ): Promise<WrittenItem> {
    if (!target) throw notFound(collection, ifMatch);
    const id = await this.singleId(target, match, collection, address, ifMatch);
    // Under a schema the item as it will be must follow it, under an update rule that the
    // values can move it out of, that rule, and when they write a search field, its word list
    // is made from it: read, check, write at that revision.
    const paths = Object.keys(values);
    if (
      this.schema.applies(target) ||
      ruleSeesWrite(plan.update, paths) ||
      writesWords(target, paths)
    )
      return this.changeAtRevision(principal, collection, target, id, match, ownerField, ifMatch, {
        rule: plan.update,
        paths,
        after: (current) => afterSet(current, values),
        write: (atRead, now, hidden) =>
          this.items.updateById(target, id, atRead, values, now, hidden),
      });
    return this.writes.run(writeKey(target.physical, id), async () => {
      const change = await this.itemEvents.beginUpdate(principal, collection, [id], ownerField);
      const conditional = {
        ...match,
        scope: bothScopes(match.scope, plan.update),
        revision: revisionCondition(ifMatch),
      };
      let updated: Awaited<ReturnType<ItemsRepository['updateByIdWithPrior']>>;
      try {
        updated = await this.items.updateByIdWithPrior(target, id, conditional, values, new Date());
        if (updated === DUPLICATE)
          throw new DuplicateItemError(
            'A unique index of the collection refuses the new values; nothing was changed.',
          );
        // The item stopped matching (or was deleted, or moved past If-Match) since the lookup.
        if (!updated)
          throw await this.notWritten(target, id, match, collection, ifMatch, plan.read, {
            rule: plan.update,
            operation: 'update',
          });
      } catch (error) {
        await change.failed(error);
        throw error;
      }
      const json = toItemJson(updated.after);
      await change.commit({ after: [json], before: [updated.before] });
      // No schema: nothing to warn of.
      return { item: updated.after, json, warnings: [] };
    });
  }

  async remove(
    principal: CustomerPrincipal,
    collection: string,
    indexName: string,
    indexValue: string,
    request: ItemRemovalRequest,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<void> {
    await this.removeOne(principal, collection, { indexName, indexValue }, request, ifMatch);
  }

  /** DELETE /data/{c} without multi: the one item the body filter selects. */
  async removeWhere(
    principal: CustomerPrincipal,
    collection: string,
    request: ItemRemovalRequest,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<void> {
    await this.removeOne(principal, collection, null, request, ifMatch);
  }

  /** One write unit: the collection's registry entry read once, through its move gate → `removeIn`. */
  private async removeOne(
    principal: CustomerPrincipal,
    collection: string,
    address: ItemAddress,
    request: ItemRemovalRequest,
    ifMatch: IfMatch,
  ): Promise<void> {
    await this.collections.write(principal, collection, (target) => {
      const plan = accessPlanOf(principal, target, request.ownerField);
      const match = addressedMatch(plan, address, request.conditions);
      return this.removeIn(
        principal,
        collection,
        target,
        plan,
        address,
        match,
        request.ownerField,
        ifMatch,
      );
    });
  }

  /**
   * The one item selected in `target`, deleted: record the feed's intent → delete (conditional)
   * → record the event; then its uniqueField claim goes back.
   */
  private async removeIn(
    principal: CustomerPrincipal,
    collection: string,
    target: RegisteredCollection | null,
    plan: AccessPlan,
    address: ItemAddress,
    match: ItemMatch,
    ownerField: string,
    ifMatch: IfMatch,
  ): Promise<void> {
    if (!target) throw notFound(collection, ifMatch);
    const id = await this.singleId(target, match, collection, address, ifMatch);
    const claims = await this.writes.run(writeKey(target.physical, id), async () => {
      const change = await this.itemEvents.beginDelete(
        principal,
        collection,
        target,
        [id],
        ownerField,
      );
      let claims: readonly UniqueClaim[];
      try {
        const conditional = {
          ...match,
          scope: bothScopes(match.scope, plan.delete),
          revision: revisionCondition(ifMatch),
        };
        claims = await this.uniqueValues.beforeDelete(target, [id]);
        if (!(await this.items.deleteById(target, id, conditional)))
          throw await this.notWritten(target, id, match, collection, ifMatch, plan.read, {
            rule: plan.delete,
            operation: 'delete',
          });
      } catch (error) {
        await change.failed(error);
        throw error;
      }
      await change.commit([id]);
      return claims;
    });
    await this.uniqueValues.afterDelete(claims, [id]);
    await this.itemLimits.deleted(tenantOf(principal), target, [id]);
  }

  /**
   * PATCH: one array operation on the item the route selects, under the rules of PUT. The new
   * array is computed from the item as read and written only at the revision read.
   */
  async applyArrayOperation(
    principal: CustomerPrincipal,
    collection: string,
    address: { indexName: string; indexValue: string },
    ownerField: string,
    operation: ArrayOperation,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<WrittenItem> {
    const path = operation.field;
    assertOwnerFieldKept(principal, { [path.split('.')[0] as string]: true }, ownerField);
    return this.collections.write(principal, collection, async (target) => {
      if (!target) throw notFound(collection, ifMatch);
      const plan = accessPlanOf(principal, target, ownerField);
      refuseProtectedWrites(plan, [path]);
      const match = addressedMatch(plan, address, []);
      const id = await this.singleId(target, match, collection, address, ifMatch);
      let holder = {} as Guarded<JsonObject>;
      const written = await this.changeAtRevision(
        principal,
        collection,
        target,
        id,
        match,
        ownerField,
        ifMatch,
        {
          rule: plan.update,
          paths: [path],
          after: (current) => {
            const value = applyArrayOperation(current, operation);
            holder = guardDocument({ value }, 'value', this.budget);
            return afterSet(current, { [path]: holder.value });
          },
          write: (atRead, now, hidden) =>
            this.items.setFieldById(target, id, atRead, path, holder, now, hidden),
        },
      );
      return answered(plan, written);
    });
  }

  /**
   * A write of the item `id` computed from the item as read: `edit.after` gives the item as it
   * will be (checked against the collection's schema and, before and after, the update rule
   * `edit.rule`: 403 ACCESS_RULE outside it), `edit.write` makes the change under the match and
   * the revision read, so the rule judged the item that is written, with the word list of the
   * item as it will be under a search configuration (`hidden`: 413 TOO_MANY_WORDS before the
   * write). A change in between (another instance) means reading again.
   * Answers the item written, its JSON (made once: its event carries it too) and the warnings of
   * its check.
   */
  private async changeAtRevision(
    principal: CustomerPrincipal,
    collection: string,
    target: NativeCollection,
    id: string,
    match: ItemMatch,
    ownerField: string,
    ifMatch: IfMatch,
    edit: {
      rule: ItemScope;
      /** The paths the write sets: when one is or holds a search field, the words are made anew. */
      paths: readonly string[];
      after: (current: StoredItem) => Record<string, unknown>;
      write: (
        atRead: ItemMatch,
        now: Date,
        hidden: HiddenMembers,
      ) => Promise<StoredItem | null | Duplicate>;
    },
  ): Promise<WrittenItem> {
    const byId: ItemMatch = {
      ...match,
      conditions: [{ kind: 'eq', path: '_id', anyOf: [id] }, ...match.conditions],
    };
    return this.writes.run(writeKey(target.physical, id), async () => {
      for (let round = 0; round < MODIFY_ROUNDS; round += 1) {
        const [current] = await this.items.findMatching(target, byId, 1);
        if (!current) throw notFound(collection, ifMatch);
        const etag = itemETag(current);
        if (!ifMatchHolds(ifMatch, etag)) throw new PreconditionFailedError(etag);
        if (!edit.rule.matches(current)) throw outsideRule('update');
        const after = edit.after(current);
        if (!edit.rule.matches(updatedImage(after, new Date()))) throw outsideRule('update');
        const warnings = this.schema.enforce(target, after, ownerField);
        const hidden = writesWords(target, edit.paths)
          ? wordsFor(target, after, this.maxWords)
          : {};
        const atRead = { ...match, revision: revisionCondition(tagOf(etag)) };
        const change = await this.itemEvents.beginUpdate(principal, collection, [id], ownerField);
        let written: StoredItem | null | Duplicate;
        try {
          written = await edit.write(atRead, new Date(), hidden);
          if (written === DUPLICATE)
            throw new DuplicateItemError(
              'A unique index of the collection refuses the new values; nothing was changed.',
            );
        } catch (error) {
          await change.failed(error);
          throw error;
        }
        // Not written at this revision: nothing changed, and no event.
        const json = written === null ? null : toItemJson(written);
        await change.commit({ after: json === null ? [] : [json], before: [current] });
        if (written && json) return { item: written, json, warnings };
      }
      throw new WriteConflictError();
    });
  }

  /**
   * Why a write found nothing: 404 without If-Match; under If-Match 412, with the ETag of the
   * item the request selects when there still is one.
   */
  private async notWritten(
    target: NativeCollection,
    id: string,
    match: ItemMatch,
    collection: string,
    ifMatch: IfMatch,
    read: ItemScope,
    { rule, operation }: { rule: ItemScope; operation: 'update' | 'delete' },
  ): Promise<DomainError> {
    // The rule is the read rule (or every item): not written means missing, or past If-Match.
    const ruled = !sameAsRead(read, rule);
    if (ifMatch.kind === 'absent' && !ruled) return new ItemNotFoundError(collection);
    const idCondition: Condition = { kind: 'eq', path: '_id', anyOf: [id] };
    const [current] = await this.items.findMatching(
      target,
      { ...match, conditions: [idCondition, ...match.conditions] },
      1,
    );
    if (current && ruled && !rule.matches(current)) return outsideRule(operation);
    if (ifMatch.kind === 'absent') return new ItemNotFoundError(collection);
    return new PreconditionFailedError(current ? itemETag(current) : null);
  }

  /**
   * The id of the one item the match selects. An `_id` path selects at most one item, so the
   * conditional write that follows decides alone (one query instead of two).
   */
  private async singleId(
    target: NativeCollection,
    match: ItemMatch,
    collection: string,
    address: ItemAddress,
    ifMatch: IfMatch,
  ): Promise<string> {
    if (address?.indexName === '_id') return address.indexValue;
    const ids = await this.items.findMatchingIds(target, match, 2);
    if (ids.length > 1) throw new AmbiguousMatchError();
    const [id] = ids;
    if (id === undefined) throw notFound(collection, ifMatch);
    return id;
  }
}

/** A write's answer: the item without the caller's protected fields, and warnings of no others. */
function answered(plan: AccessPlan, written: WrittenItem): WrittenItem {
  if (plan.protectedFields.length === 0) return written;
  return {
    ...written,
    json: withoutProtected(
      plan,
      written.json as unknown as Record<string, unknown>,
    ) as unknown as WrittenItem['json'],
    warnings: visibleWarnings(plan, written.warnings),
  };
}

/**
 * Whether writing these paths changes the word list of an item of `target`: then the write needs
 * the whole item after it (read, compute, write at the revision read).
 */
export function writesWords(target: NativeCollection, paths: readonly string[]): boolean {
  const rule = searchRuleOf(target);
  return rule !== null && touchesSearch(rule, paths);
}

/** No item to write: 404, or 412 under If-Match (there is no representation to match). */
function notFound(collection: string, ifMatch: IfMatch): DomainError {
  return ifMatch.kind === 'absent'
    ? new ItemNotFoundError(collection)
    : new PreconditionFailedError(null);
}
