import { Inject, Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { type CustomerPrincipal, ownerValueOf, tenantOf } from '../../auth';
import { ValidationFailedError } from '../../common/errors';
import { DUPLICATE, type Duplicate } from '../../common/mongo/duplicate';
import type { KeysetSide } from '../../common/pagination/keyset';
import { CollectionsService } from '../collections/collections.service';
import {
  DuplicateItemError,
  ItemNotFoundError,
  AmbiguousMatchError,
  WriteConflictError,
} from '../data.errors';
import { pathCondition } from '../query/data-query';
import { accessPlanOf } from '../access/access-plan';
import { refuseProtectedPaths, withoutProtected } from '../access/protected-fields';
import { TIMESTAMP_FIELDS, type Condition } from '../query/filter-operators';
import type { ItemListQuery, ItemQuery, KeptTimes, NewItemRequest } from '../query/data-requests';
import { valueAtPath } from '../query/json-guard';
import { isScalar, type Guarded, type JsonObject, type JsonScalar } from '../../common/json';
import { orderPaths } from '../query/list-plan';
import { projects, type Projection } from '../query/projection';
import { toItemJson, type DataItemDto } from './dto/data-item.dto';
import { ItemEvents } from './item-events';
import { conditionPaths, ownerScopeOf, readMatchOf, refuseProtectedListPaths } from './item-scope';
import {
  matchScopeOf,
  outsideRule,
  refuseProtectedItem,
  takenError,
  visibleWarnings,
} from './item-access';
import { ItemsRepository, type HiddenMembers } from './items.repository';
import { APP_CONFIG, type AppConfig } from '../../config';
import { wordsFor } from '../search/search-rule';
import type { UniqueClaim } from './unique/unique-claim.repository';
import { UniqueValuesService } from './unique/unique-values.service';
import type { NativeCollection, StoredItem } from '../storage/tenant-storage';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import type { SchemaError } from '../rules/schema/item-schemas';
import { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import { ItemExpiry } from '../rules/expiry/item-expiry';
import { withSearch } from '../search/search-query';
import { ItemLimits } from './limits/item-limits.service';

export interface ItemPage {
  items: StoredItem[];
  /** The keyset cursor of the following page, or null when this is the last one. */
  next: { side: KeysetSide; cursor: Record<string, string> } | null;
}

/**
 * A written item, its JSON (made once: the feed's event and the answer carry it) and the
 * violations of the `warn` schema it was written under (none: empty).
 */
export interface WrittenItem {
  item: StoredItem;
  json: DataItemDto;
  warnings: SchemaError[];
}

/**
 * The rules of creating and reading items: who owns what (authField), which items a request
 * selects, and uniqueness. Requests arrive as guarded commands (query/data-requests.ts); the
 * repository receives only guarded documents and server-built conditions. Changes of stored
 * items are ItemWritesService's.
 */
@Injectable()
export class ItemsService {
  constructor(
    private readonly collections: CollectionsService,
    private readonly items: ItemsRepository,
    private readonly uniqueValues: UniqueValuesService,
    private readonly itemEvents: ItemEvents,
    private readonly schema: SchemaEnforcement,
    private readonly expiry: ItemExpiry,
    private readonly itemLimits: ItemLimits,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * POST /data/{c}: one write unit. The request is checked first (owner, uniqueField value),
   * then the collection's registry entry is read once and passes the move gate once
   * (CollectionsService.writeCreating registers a new collection), then `createIn`.
   */
  async create(
    principal: CustomerPrincipal,
    collection: string,
    request: NewItemRequest,
  ): Promise<WrittenItem> {
    const item = newItemOf(principal, request);
    return this.collections.writeCreating(principal, collection, (target) =>
      this.createIn(principal, collection, target, item),
    );
  }

  /**
   * Creates a checked item (newItemOf) in `target`, the collection of a write unit that passed
   * its move gate: validate (schema, expiry) → record the feed's intent → write → record the
   * events → answer (the item, its JSON made once, the schema's warnings).
   */
  async createIn(
    principal: CustomerPrincipal,
    collection: string,
    target: RegisteredCollection,
    { request, id, uniqueValue }: NewItem,
  ): Promise<WrittenItem> {
    const { item, ownerField, uniqueField } = request;
    const scope = ownerScopeOf(principal, ownerField);
    // The access rules: no protected field set, the item as it will be inside the create rule …
    const plan = accessPlanOf(principal, target, ownerField);
    refuseProtectedItem(plan, item);
    const at = new Date();
    const times = request.imported?.times ?? { createdAt: at, updatedAt: at };
    if (
      !plan.create.matches({
        ...item,
        _id: id,
        _createdAt: times.createdAt,
        _updatedAt: times.updatedAt,
      })
    )
      throw outsideRule('create');
    // Validate: the schema (a `warn` schema's violations are returned, not thrown) …
    const warnings = this.schema.enforce(target, item, ownerField);
    // … its word list under a search configuration (413 past the cap, before anything is
    // written), stored in the insert itself …
    const hidden = wordsFor(target, item, this.config.limits.searchMaxWordsPerItem);
    // … expiry: an expired item holds neither its _id nor its value any more, it goes first …
    await this.expiry.releaseHeld(
      { tenant: tenantOf(principal), branch: principal.branch, entry: target },
      request.id,
      uniqueField === null || uniqueValue === undefined
        ? null
        : { scope, field: uniqueField, value: uniqueValue },
    );
    // … uniqueness: a taken uniqueField value in the caller's scope is refused, naming the item
    // that holds it; of concurrent creates with one value, only the one holding its claim
    // inserts (`_id` is unique by itself).
    const refuseTakenValue = async (): Promise<void> => {
      if (uniqueField === null || uniqueValue === undefined) return;
      const existingId = await this.items.findIdByValue(target, scope, uniqueField, uniqueValue);
      if (existingId !== null)
        throw await takenError(this.items, target, plan, uniqueField, existingId);
    };
    await refuseTakenValue();
    const claim =
      uniqueField === null || uniqueField === '_id' || uniqueValue === undefined
        ? null
        : await this.uniqueValues.claim(
            { target, scope, field: uniqueField, value: uniqueValue },
            id,
          );
    // The item quota: a place in the collection's limit (none without a limit), taken last of
    // the refusals so that a refused create leaves nothing behind. Then the feed's intent.
    // Refused (the collection is full, the feed's writes are paused), what was taken goes back
    // at once.
    const giveBackClaim = async (): Promise<void> => {
      if (claim) await this.uniqueValues.release(claim).catch(() => undefined);
    };
    const place = await this.itemLimits
      .take(tenantOf(principal), target, id)
      .catch(async (error: unknown) => {
        await giveBackClaim();
        throw error;
      });
    const change = await this.itemEvents
      .beginCreate(principal, collection, [id], ownerField)
      .catch(async (error: unknown) => {
        await giveBackClaim();
        await this.itemLimits.giveBack(place).catch(() => undefined);
        throw error;
      });
    // Write.
    let stored: StoredItem | Duplicate;
    try {
      await this.itemLimits.assertInsertable(place);
      stored = await this.insertHolding(
        claim,
        target,
        id,
        item,
        request.imported?.times ?? null,
        hidden,
      );
    } catch (error) {
      // What is not given back now (the database is failing) is taken back after its grace.
      await giveBackClaim();
      await this.itemLimits.giveBack(place).catch(() => undefined);
      await change.failed(error);
      throw error;
    }
    // Record the events and answer, with the item's JSON made once for both.
    if (stored !== DUPLICATE) {
      const json = toItemJson(stored);
      await change.commit([json]);
      // The event carries the whole item; the answer what the caller may see of it.
      return {
        item: stored,
        json: withoutProtected(plan, json as unknown as Record<string, unknown>) as typeof json,
        warnings: visibleWarnings(plan, warnings),
      };
    }
    await this.itemLimits.giveBack(place);
    await change.commit([]);
    // A unique index refused the item: name the item it collides with when the caller may see it.
    await refuseTakenValue();
    if (await this.items.existsById(target, id))
      throw await takenError(this.items, target, plan, '_id', id);
    throw new DuplicateItemError('A unique index of the collection refuses the item.');
  }

  /**
   * Find-or-create (`onConflict: "return"`): creates the item, or answers the item in the caller's
   * scope that holds its uniqueField value. The value's claim decides between concurrent requests,
   * so exactly one creates; the others wait for its item to be readable. One write unit: the
   * collection is read and gated once for all its rounds.
   */
  async findOrCreate(
    principal: CustomerPrincipal,
    collection: string,
    request: NewItemRequest,
  ): Promise<WrittenItem & { created: boolean }> {
    const item = newItemOf(principal, request);
    return this.collections.writeCreating(principal, collection, async (target) => {
      for (let round = 0; round < FIND_ROUNDS; round += 1) {
        let existingId: unknown;
        let refusal: unknown;
        try {
          return { ...(await this.createIn(principal, collection, target, item)), created: true };
        } catch (error) {
          existingId =
            error instanceof DuplicateItemError ? error.extensions?.existingId : undefined;
          if (typeof existingId !== 'string') throw error;
          refusal = error;
        }
        // existingId is named only for an item the caller may read (createIn).
        const plan = accessPlanOf(principal, target, request.ownerField);
        const idCondition: Condition = { kind: 'eq', path: '_id', anyOf: [existingId] };
        const [existing] = await this.items.findMatching(
          target,
          { scope: matchScopeOf(plan.read), conditions: [idCondition] },
          1,
        );
        // Nothing was written: no warnings.
        if (existing) {
          const json = toItemJson(existing);
          return {
            item: existing,
            json: withoutProtected(plan, json as unknown as Record<string, unknown>) as typeof json,
            warnings: [],
            created: false,
          };
        }
        // The client's own _id is taken outside the caller's scope: nothing to return.
        if (existingId === request.id) throw refusal;
        // The holder is still being inserted by a concurrent request, or just went: look again.
        await new Promise((resolve) => setTimeout(resolve, FIND_FIRST_WAIT_MS * 2 ** round));
      }
      throw new WriteConflictError();
    });
  }

  /** Inserts the item holding its value's claim, if any; the claim is given back on failure. */
  private async insertHolding(
    claim: UniqueClaim | null,
    target: NativeCollection,
    id: string,
    item: Guarded<JsonObject>,
    kept: KeptTimes | null,
    hidden: HiddenMembers,
  ): Promise<StoredItem | typeof DUPLICATE> {
    const now = new Date();
    const times = kept ?? { createdAt: now, updatedAt: now };
    if (!claim) return this.items.insert(target, id, item, times, hidden);
    await this.uniqueValues.assertInsertable(claim);
    try {
      const stored = await this.items.insert(target, id, item, times, hidden);
      if (stored === DUPLICATE) await this.uniqueValues.release(claim);
      return stored;
    } catch (error) {
      // A claim not given back now (the database is failing) expires after CLAIM_GRACE_MS.
      await this.uniqueValues.release(claim).catch(() => undefined);
      throw error;
    }
  }

  async list(
    principal: CustomerPrincipal,
    collection: string,
    query: ItemListQuery,
  ): Promise<ItemPage> {
    const { plan, projection } = query;
    const target = await this.collections.find(principal, collection);
    const access = accessPlanOf(principal, target, query.ownerField);
    refuseProtectedListPaths(access, query);
    if (!target) return { items: [], next: null };
    const match = withSearch(
      readMatchOf(access, query.conditions),
      collection,
      target,
      query.search,
      this.config,
    );
    const found = await this.items.list(target, match, plan, projection);
    const items = found.slice(0, plan.limit);
    if (plan.reversed) items.reverse();
    // The cursor of the following page: the last item's, or the first's when walking backwards.
    const edge = plan.reversed ? items[0] : items.at(-1);
    const visible = items.map((item) => withoutProtected(access, item));
    if (found.length <= plan.limit || !edge) return { items: visible, next: null };
    const paths = orderPaths(plan);
    // A sort field the projection leaves out is read from the edge item alone.
    const source = paths.every((path) => projects(projection, path))
      ? edge
      : await this.items.findFieldsById(target, edge._id, paths, access.read);
    const cursor: Record<string, string> = {};
    for (const path of paths) {
      const text = source ? cursorText(path, valueAtPath(source, path)) : null;
      if (text === null) return { items: visible, next: null };
      cursor[path] = text;
    }
    return { items: visible, next: { side: plan.reversed ? 'before' : 'after', cursor } };
  }

  async count(principal: CustomerPrincipal, collection: string, query: ItemQuery): Promise<number> {
    const target = await this.collections.find(principal, collection);
    const access = accessPlanOf(principal, target, query.ownerField);
    refuseProtectedPaths(access, conditionPaths(query.conditions), 'filter');
    if (!target) return 0;
    const match = withSearch(
      readMatchOf(access, query.conditions),
      collection,
      target,
      query.search,
      this.config,
    );
    // Collection statistics cannot leave expired items out: a collection with a rule counts.
    if (
      !match.scope?.filter &&
      match.conditions.length === 0 &&
      !match.words &&
      !target.rules.expiry
    )
      return this.items.estimatedCount(target);
    return this.items.count(target, match);
  }

  /**
   * One item by `{indexName}/{indexValue}`. An item outside the caller's read rule is missing:
   * the rule is ANDed into the one query, so a readable and an unreadable item cost the same.
   */
  async get(
    principal: CustomerPrincipal,
    collection: string,
    indexName: string,
    indexValue: string,
    query: ItemQuery,
    projection: Projection | null = null,
  ): Promise<StoredItem> {
    const path = pathCondition(indexName, indexValue);
    const target = await this.collections.find(principal, collection);
    const access = accessPlanOf(principal, target, query.ownerField);
    // The route's field is a filter too: GET /data/{c}/cost/12 would tell a protected value.
    refuseProtectedPaths(access, [indexName], 'indexName');
    refuseProtectedPaths(access, conditionPaths(query.conditions), 'filter');
    if (projection) refuseProtectedPaths(access, projection.paths, 'fields');
    if (!target) throw new ItemNotFoundError(collection);
    const match = readMatchOf(access, [path, ...query.conditions]);
    // An _id names at most one item; any other field needs a second match to detect ambiguity.
    const found = await this.items.findMatching(
      target,
      match,
      indexName === '_id' ? 1 : 2,
      projection,
    );
    if (found.length > 1) throw new AmbiguousMatchError();
    const [item] = found;
    if (!item) throw new ItemNotFoundError(collection);
    return withoutProtected(access, item);
  }
}

/**
 * How often find-or-create looks for the item holding the value, waiting twice as long each time
 * (20 ms … 640 ms, 1.3 s in all): the holder's insert follows its claim at once, but a loaded
 * database can take that long.
 */
const FIND_ROUNDS = 7;
const FIND_FIRST_WAIT_MS = 20;

/** A sort value as a cursor parameter, when it reads back as the same value. */
function cursorText(sortPath: string, value: unknown): string | null {
  if (value instanceof Date) return TIMESTAMP_FIELDS.has(sortPath) ? value.toISOString() : null;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string') {
    if (sortPath === '_id') return value;
    const numeric = value.trim() !== '' && Number.isFinite(Number(value));
    return numeric ? null : value;
  }
  return null;
}

/** A new item as checked before its collection is read (newItemOf). */
export interface NewItem {
  request: NewItemRequest;
  /** The client's `_id`, or a new one. */
  id: string;
  /** The value of the request's uniqueField (undefined: none). */
  uniqueValue: JsonScalar | undefined;
}

/**
 * A create's checks that need no collection, before its registry entry is read: the owner field
 * stamped (stampOwner), its `_id`, the value its uniqueField names (present and scalar).
 */
export function newItemOf(principal: CustomerPrincipal, request: NewItemRequest): NewItem {
  const id = request.id ?? new Types.ObjectId().toHexString();
  stampOwner(principal, request);
  const { uniqueField } = request;
  const uniqueValue =
    uniqueField === null ? undefined : uniqueValueOf(request.item, id, uniqueField);
  return { request, id, uniqueValue };
}

/**
 * Writes the owner field of a new item: a sub key's items are always its own; root and team
 * keys may file items for others (and import them as they are).
 */
export function stampOwner(principal: CustomerPrincipal, request: NewItemRequest): void {
  const { item, ownerField } = request;
  if (principal.kind === 'sub' || (!request.imported && !Object.hasOwn(item, ownerField)))
    item[ownerField] = ownerValueOf(principal);
}

/** The value `uniqueField` names, after the owner field was stamped: present and scalar. */
export function uniqueValueOf(
  item: Guarded<Record<string, unknown>>,
  id: string,
  field: string,
): JsonScalar {
  if (field === '_id') return id;
  if (!Object.hasOwn(item, field))
    throw new ValidationFailedError([
      { field: 'uniqueField', message: `item has no field '${field}'` },
    ]);
  const value = item[field];
  if (!isScalar(value))
    throw new ValidationFailedError([
      { field: `item.${field}`, message: 'must be a string, number, boolean or null' },
    ]);
  return value;
}
