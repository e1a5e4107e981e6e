import { checkCollectionAccess, ownerValueOf, type CustomerPrincipal } from '../../auth';
import { uniqueValueOf } from '../items/items.service';
import { ownerScopeOf } from '../items/item-scope';
import { accessPlanOf } from '../access/access-plan';
import {
  matchScopeOf,
  outsideRule,
  refuseProtectedItem,
  takenError,
  visibleWarnings,
} from '../items/item-access';
import type { NewItemRequest } from '../query/data-requests';
import type { CollectionsService } from '../collections/collections.service';
import type { ItemsRepository } from '../items/items.repository';
import type { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import type { ImportOptions } from './import-options';
import { ok, withWarnings, type Outcome } from './import-results';
import { wordsFor } from '../search/search-rule';

/**
 * What an import with `dryRun=true` would answer, read from the stored data (not from earlier
 * lines, which wrote nothing), counting the collections it would have made against the quota.
 */
export class ImportDryRun {
  /** Collections the run would have created. */
  private readonly wouldCreate = new Set<string>();

  constructor(
    private readonly collections: CollectionsService,
    private readonly items: ItemsRepository,
    private readonly schema: SchemaEnforcement,
    private readonly principal: CustomerPrincipal,
    private readonly mode: ImportOptions['mode'],
    /** SEARCH_MAX_WORDS_PER_ITEM: an item past it is refused as the write would (413). */
    private readonly maxWords: number,
  ) {}

  /** What writing the item would answer (with the warnings it would be written with). */
  async item(
    principal: CustomerPrincipal,
    line: number,
    collection: string,
    request: NewItemRequest,
  ): Promise<Outcome> {
    const { item, ownerField, uniqueField, id } = request;
    // What the import would refuse, the dry run refuses: a collection the key may not write.
    checkCollectionAccess(principal, collection, 'write');
    if (principal.kind === 'sub') item[ownerField] = ownerValueOf(principal);
    const unique = uniqueField === null ? null : uniqueValueOf(item, id ?? '', uniqueField);
    const target = await this.collections.find(principal, collection);
    if (!target) {
      await this.collection(collection);
      return ok(line, 201, id ?? undefined);
    }
    // The access rules as the import applies them (ItemsService.createIn, ItemReplacements).
    const plan = accessPlanOf(principal, target, ownerField);
    refuseProtectedItem(plan, item);
    const warnings = visibleWarnings(plan, this.schema.enforce(target, item, ownerField));
    wordsFor(target, item, this.maxWords);
    const scope = ownerScopeOf(principal, ownerField);
    const now = new Date();
    let replaces = false;
    if (id !== null && (await this.items.existsById(target, id))) {
      const [current] = await this.items.findMatching(
        target,
        { scope: matchScopeOf(plan.read), conditions: [{ kind: 'eq', path: '_id', anyOf: [id] }] },
        1,
      );
      if (this.mode === 'insert' || !current)
        throw await takenError(this.items, target, plan, '_id', id);
      const after = { ...item, _id: id, _createdAt: current._createdAt, _updatedAt: now };
      if (!plan.update.matches(current) || !plan.update.matches(after)) throw outsideRule('update');
      replaces = true;
    } else if (!plan.create.matches({ ...item, _id: id ?? '', _createdAt: now, _updatedAt: now }))
      throw outsideRule('create');
    if (uniqueField !== null && unique !== null && uniqueField !== '_id') {
      const holder = await this.items.findIdByValue(target, scope, uniqueField, unique);
      if (holder !== null && holder !== id)
        throw await takenError(this.items, target, plan, uniqueField, holder);
    }
    return withWarnings(ok(line, replaces ? 200 : 201, id ?? undefined), warnings);
  }

  /** A new collection the run would make: within the quota, counting those it would have made. */
  async collection(name: string): Promise<void> {
    if (this.wouldCreate.has(name)) return;
    const { used, limit } = await this.collections.quota(this.principal);
    const usage = used + this.wouldCreate.size;
    if (limit !== null && usage >= limit)
      throw await this.collections.quotaExceeded(this.principal, usage);
    this.wouldCreate.add(name);
  }
}
