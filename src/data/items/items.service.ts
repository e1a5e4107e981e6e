import { Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { type CustomerPrincipal, ownerValueOf } from '../../auth';
import {
  ForbiddenError,
  PreconditionFailedError,
  ValidationFailedError,
  type DomainError,
} from '../../common/errors';
import { ifMatchHolds, NO_PRECONDITION, type IfMatch } from '../../common/http/etag';
import { DUPLICATE } from '../../common/mongo/duplicate';
import { FallbackWriteQueue } from '../../common/mongo/fallback-database';
import type { KeysetSide } from '../../common/pagination/keyset';
import { CollectionsService } from '../collections/collections.service';
import {
  pathCondition,
  TIMESTAMP_FIELDS,
  type Condition,
  type ItemMatch,
  type OwnerScope,
} from '../query/data-query';
import {
  type ItemChangeRequest,
  type ItemListQuery,
  type ItemQuery,
  type ItemRemovalRequest,
  type NewItemRequest,
} from '../query/data-requests';
import {
  AmbiguousMatchError,
  DuplicateItemError,
  ItemNotFoundError,
  WriteConflictError,
} from '../data.errors';
import { ItemsRepository, type StoredItem } from './items.repository';
import { itemETag, revisionCondition } from './item-revision';
import { orderPaths } from '../query/list-plan';
import { projects, type Projection } from '../query/projection';
import {
  valueAtPath,
  isScalar,
  type Guarded,
  type JsonObject,
  type JsonScalar,
} from '../query/json-guard';
import type { UniqueClaim } from './unique/unique-claim.repository';
import { ItemEvents } from './item-events';
import { UniqueValuesService } from './unique/unique-values.service';

/** The item a single-item write addresses: a route's `{indexName}/{indexValue}`, or none (the body filter alone). */
type ItemAddress = { indexName: string; indexValue: string } | null;

export interface ItemPage {
  items: StoredItem[];
  /** The keyset cursor of the following page, or null when this is the last one. */
  next: { side: KeysetSide; cursor: Record<string, string> } | null;
}

/**
 * The rules of items: who owns what (authField), which items a request selects (one, none or
 * several), and uniqueness. Requests arrive as guarded commands (data-requests.ts); the
 * repository receives only guarded documents and server-built conditions.
 *
 * Updates and deletes are one conditional write each (the match, the id, and under If-Match the
 * revision). FerretDB does not re-check a filter at write time, so they are also queued per
 * item in this process (`writes`): one instance then never writes over an item that stopped
 * matching its filter or its If-Match. Several instances need MongoDB for that.
 */
@Injectable()
export class ItemsService {
  private readonly writes = new FallbackWriteQueue();

  constructor(
    private readonly collections: CollectionsService,
    private readonly items: ItemsRepository,
    private readonly uniqueValues: UniqueValuesService,
    private readonly itemEvents: ItemEvents,
  ) {}

  /** Sub callers are confined to their own items; root and team callers see the namespace. */
  private scopeOf(principal: CustomerPrincipal, ownerField: string): OwnerScope | null {
    return principal.kind === 'sub' ? { field: ownerField, value: ownerValueOf(principal) } : null;
  }

  async create(
    principal: CustomerPrincipal,
    collection: string,
    request: NewItemRequest,
  ): Promise<StoredItem> {
    const { item, ownerField, uniqueField } = request;
    const id = request.id ?? new Types.ObjectId().toHexString();
    // A sub key's items are always its own; root and team keys may file items for others.
    if (principal.kind === 'sub' || !Object.hasOwn(item, ownerField))
      item[ownerField] = ownerValueOf(principal);
    const uniqueValue = uniqueField === null ? undefined : this.uniqueValue(item, id, uniqueField);

    const target = await this.collections.findOrCreate(principal, collection);
    const scope = this.scopeOf(principal, ownerField);
    // Refuses a taken uniqueField value in the caller's scope, naming the item that holds it.
    const refuseTakenValue = async (): Promise<void> => {
      if (uniqueField === null || uniqueValue === undefined) return;
      const existingId = await this.items.findIdByValue(
        target.physical,
        scope,
        uniqueField,
        uniqueValue,
      );
      if (existingId !== null) throw DuplicateItemError.taken(uniqueField, existingId);
    };
    await refuseTakenValue();

    // Of concurrent creates with one value, only the one holding its claim inserts. `_id` is
    // unique by itself.
    const claim =
      uniqueField === null || uniqueField === '_id' || uniqueValue === undefined
        ? null
        : await this.uniqueValues.claim(
            { physical: target.physical, scope, field: uniqueField, value: uniqueValue },
            id,
          );
    const stored = await this.itemEvents.created(principal, collection, id, ownerField, () =>
      this.insertHolding(claim, target.physical, id, item),
    );
    if (stored !== DUPLICATE) return stored;
    // A unique index refused the item: name the item it collides with when the caller may see it.
    await refuseTakenValue();
    if (await this.items.existsById(target.physical, id)) throw DuplicateItemError.taken('_id', id);
    throw new DuplicateItemError('A unique index of the collection refuses the item.');
  }

  /**
   * Find-or-create (`onConflict: "return"`): creates the item, or answers the item in the caller's
   * scope that holds its uniqueField value. The value's claim decides between concurrent requests,
   * so exactly one creates; the others wait for its item to be readable.
   */
  async findOrCreate(
    principal: CustomerPrincipal,
    collection: string,
    request: NewItemRequest,
  ): Promise<{ item: StoredItem; created: boolean }> {
    for (let round = 0; round < FIND_ROUNDS; round += 1) {
      let existingId: unknown;
      let refusal: unknown;
      try {
        return { item: await this.create(principal, collection, request), created: true };
      } catch (error) {
        existingId = error instanceof DuplicateItemError ? error.extensions?.existingId : undefined;
        if (typeof existingId !== 'string') throw error;
        refusal = error;
      }
      const target = await this.collections.find(principal, collection);
      const scope = this.scopeOf(principal, request.ownerField);
      const idCondition: Condition = { kind: 'eq', path: '_id', anyOf: [existingId] };
      const [existing] = target
        ? await this.items.findMatching(target.physical, { scope, conditions: [idCondition] }, 1)
        : [];
      if (existing) return { item: existing, created: false };
      // The client's own _id is taken outside the caller's scope: nothing to return.
      if (existingId === request.id) throw refusal;
      // The holder is still being inserted by a concurrent request, or just went: look again.
      await new Promise((resolve) => setTimeout(resolve, FIND_FIRST_WAIT_MS * 2 ** round));
    }
    throw new WriteConflictError();
  }

  /** Inserts the item holding its value's claim, if any; the claim is given back on failure. */
  private async insertHolding(
    claim: UniqueClaim | null,
    physical: string,
    id: string,
    item: Guarded<JsonObject>,
  ): Promise<StoredItem | typeof DUPLICATE> {
    if (!claim) return this.items.insert(physical, id, item, new Date());
    await this.uniqueValues.assertInsertable(claim);
    try {
      const stored = await this.items.insert(physical, id, item, new Date());
      if (stored === DUPLICATE) await this.uniqueValues.release(claim);
      return stored;
    } catch (error) {
      // A claim not given back now (the database is failing) expires after CLAIM_GRACE_MS.
      await this.uniqueValues.release(claim).catch(() => undefined);
      throw error;
    }
  }

  /** The value `uniqueField` names, after the owner field was stamped: present and scalar. */
  private uniqueValue(
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

  async list(
    principal: CustomerPrincipal,
    collection: string,
    query: ItemListQuery,
  ): Promise<ItemPage> {
    const { plan, projection } = query;
    const match = this.queryMatch(principal, query);
    const target = await this.collections.find(principal, collection);
    if (!target) return { items: [], next: null };
    const found = await this.items.list(target.physical, match, plan, projection);
    const items = found.slice(0, plan.limit);
    if (plan.reversed) items.reverse();
    // The cursor of the following page: the last item's, or the first's when walking backwards.
    const edge = plan.reversed ? items[0] : items.at(-1);
    if (found.length <= plan.limit || !edge) return { items, next: null };
    const paths = orderPaths(plan);
    // A sort field the projection leaves out is read from the edge item alone.
    const source = paths.every((path) => projects(projection, path))
      ? edge
      : await this.items.findFieldsById(target.physical, edge._id, paths);
    const cursor: Record<string, string> = {};
    for (const path of paths) {
      const text = source ? cursorText(path, valueAtPath(source, path)) : null;
      if (text === null) return { items, next: null };
      cursor[path] = text;
    }
    return { items, next: { side: plan.reversed ? 'before' : 'after', cursor } };
  }

  async count(principal: CustomerPrincipal, collection: string, query: ItemQuery): Promise<number> {
    const match = this.queryMatch(principal, query);
    const target = await this.collections.find(principal, collection);
    if (!target) return 0;
    if (match.scope === null && match.conditions.length === 0)
      return this.items.estimatedCount(target.physical);
    return this.items.count(target.physical, match);
  }

  async get(
    principal: CustomerPrincipal,
    collection: string,
    indexName: string,
    indexValue: string,
    query: ItemQuery,
    projection: Projection | null = null,
  ): Promise<StoredItem> {
    const match = this.queryMatch(principal, query, pathCondition(indexName, indexValue));
    const target = await this.collections.find(principal, collection);
    if (!target) throw new ItemNotFoundError(collection);
    // An _id names at most one item; any other field needs a second match to detect ambiguity.
    const found = await this.items.findMatching(
      target.physical,
      match,
      indexName === '_id' ? 1 : 2,
      projection,
    );
    if (found.length > 1) throw new AmbiguousMatchError();
    const [item] = found;
    if (!item) throw new ItemNotFoundError(collection);
    return item;
  }

  async update(
    principal: CustomerPrincipal,
    collection: string,
    indexName: string,
    indexValue: string,
    request: ItemChangeRequest,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<StoredItem> {
    return this.updateOne(principal, collection, { indexName, indexValue }, request, ifMatch);
  }

  /** PUT /data/{c} without multi: the one item the body filter selects. */
  async updateWhere(
    principal: CustomerPrincipal,
    collection: string,
    request: ItemChangeRequest,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<StoredItem> {
    return this.updateOne(principal, collection, null, request, ifMatch);
  }

  private async updateOne(
    principal: CustomerPrincipal,
    collection: string,
    address: ItemAddress,
    request: ItemChangeRequest,
    ifMatch: IfMatch,
  ): Promise<StoredItem> {
    const { values, ownerField } = request;
    assertOwnerFieldKept(principal, values, ownerField);
    const match = this.bodyMatch(principal, ownerField, address, request.conditions);
    const target = await this.collections.find(principal, collection);
    if (!target) throw notFound(collection, ifMatch);
    const { physical } = target;
    const id = await this.singleId(physical, match, collection, address, ifMatch);
    return this.writes.run(writeKey(physical, id), () =>
      this.itemEvents.updated(principal, collection, [id], ownerField, async () => {
        const conditional = { ...match, revision: revisionCondition(ifMatch) };
        const updated = await this.items.updateById(physical, id, conditional, values, new Date());
        if (updated === DUPLICATE)
          throw new DuplicateItemError(
            'A unique index of the collection refuses the new values; nothing was changed.',
          );
        // The item stopped matching (or was deleted, or moved past If-Match) since the lookup.
        if (!updated) throw await this.notWritten(physical, id, match, collection, ifMatch);
        return updated;
      }),
    );
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

  private async removeOne(
    principal: CustomerPrincipal,
    collection: string,
    address: ItemAddress,
    request: ItemRemovalRequest,
    ifMatch: IfMatch,
  ): Promise<void> {
    const { ownerField } = request;
    const match = this.bodyMatch(principal, ownerField, address, request.conditions);
    const target = await this.collections.find(principal, collection);
    if (!target) throw notFound(collection, ifMatch);
    const { physical } = target;
    const id = await this.singleId(physical, match, collection, address, ifMatch);
    await this.writes.run(writeKey(physical, id), () =>
      this.itemEvents.deleted(principal, collection, physical, [id], ownerField, async () => {
        const conditional = { ...match, revision: revisionCondition(ifMatch) };
        if (!(await this.items.deleteById(physical, id, conditional)))
          throw await this.notWritten(physical, id, match, collection, ifMatch);
        return [id];
      }),
    );
    await this.uniqueValues.releaseItem(target.physical, id);
  }

  /**
   * A change computed from the item itself (array operations): the one item the route selects is
   * read, `change` gives the guarded value (`{value}`) to set at `path`, and the write goes through only at
   * the revision read — a change in between (another instance) means reading again.
   */
  async modifyOne(
    principal: CustomerPrincipal,
    collection: string,
    address: { indexName: string; indexValue: string },
    ownerField: string,
    path: string,
    change: (item: StoredItem) => Guarded<JsonObject>,
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<StoredItem> {
    assertOwnerFieldKept(principal, { [path.split('.')[0] as string]: true }, ownerField);
    const match = this.bodyMatch(principal, ownerField, address, []);
    const target = await this.collections.find(principal, collection);
    if (!target) throw notFound(collection, ifMatch);
    const { physical } = target;
    const id = await this.singleId(physical, match, collection, address, ifMatch);
    const byId: ItemMatch = {
      ...match,
      conditions: [{ kind: 'eq', path: '_id', anyOf: [id] }, ...match.conditions],
    };
    return this.writes.run(writeKey(physical, id), async () => {
      for (let round = 0; round < MODIFY_ROUNDS; round += 1) {
        const [current] = await this.items.findMatching(physical, byId, 1);
        if (!current) throw notFound(collection, ifMatch);
        const etag = itemETag(current);
        if (!ifMatchHolds(ifMatch, etag)) throw new PreconditionFailedError(etag);
        const holder = change(current);
        const atRead = { ...match, revision: revisionCondition(tagOf(etag)) };
        const updated = await this.itemEvents.updated(
          principal,
          collection,
          [id],
          ownerField,
          async () => {
            const written = await this.items.setFieldById(
              physical,
              id,
              atRead,
              path,
              holder,
              new Date(),
            );
            if (written === DUPLICATE)
              throw new DuplicateItemError(
                'A unique index of the collection refuses the new value; nothing was changed.',
              );
            // Not written at this revision: nothing changed, and no event.
            return written === null ? [] : [written];
          },
        );
        if (updated[0]) return updated[0];
      }
      throw new WriteConflictError();
    });
  }

  /**
   * Why a write found nothing: 404 without If-Match; under If-Match 412, with the ETag of the
   * item the request selects when there still is one.
   */
  private async notWritten(
    physical: string,
    id: string,
    match: ItemMatch,
    collection: string,
    ifMatch: IfMatch,
  ): Promise<DomainError> {
    if (ifMatch.kind === 'absent') return new ItemNotFoundError(collection);
    const idCondition: Condition = { kind: 'eq', path: '_id', anyOf: [id] };
    const [current] = await this.items.findMatching(
      physical,
      { ...match, conditions: [idCondition, ...match.conditions] },
      1,
    );
    return new PreconditionFailedError(current ? itemETag(current) : null);
  }

  private queryMatch(principal: CustomerPrincipal, query: ItemQuery, path?: Condition): ItemMatch {
    return {
      scope: this.scopeOf(principal, query.ownerField),
      conditions: path ? [path, ...query.conditions] : query.conditions,
    };
  }

  private bodyMatch(
    principal: CustomerPrincipal,
    ownerField: string,
    address: ItemAddress,
    conditions: Condition[],
  ): ItemMatch {
    const path = address ? [pathCondition(address.indexName, address.indexValue)] : [];
    return { scope: this.scopeOf(principal, ownerField), conditions: [...path, ...conditions] };
  }

  /**
   * The id of the one item the match selects. An `_id` path selects at most one item, so the
   * conditional write that follows decides alone (one query instead of two).
   */
  private async singleId(
    physical: string,
    match: ItemMatch,
    collection: string,
    address: ItemAddress,
    ifMatch: IfMatch,
  ): Promise<string> {
    if (address?.indexName === '_id') return address.indexValue;
    const ids = await this.items.findMatchingIds(physical, match, 2);
    if (ids.length > 1) throw new AmbiguousMatchError();
    const [id] = ids;
    if (id === undefined) throw notFound(collection, ifMatch);
    return id;
  }
}

/**
 * How often find-or-create looks for the item holding the value, waiting twice as long each time
 * (20 ms … 640 ms, 1.3 s in all): the holder's insert follows its claim at once, but a loaded
 * database can take that long.
 */
const FIND_ROUNDS = 7;
const FIND_FIRST_WAIT_MS = 20;

/** Reads of an item that a concurrent write keeps moving before a change computed from it gives up. */
const MODIFY_ROUNDS = 3;

/** If-Match naming exactly the tag read. */
function tagOf(etag: string): IfMatch {
  return { kind: 'tags', opaques: [etag.slice(1, -1)] };
}

/** A sub key never changes the field that makes its items its own. */
export function assertOwnerFieldKept(
  principal: CustomerPrincipal,
  values: Record<string, unknown>,
  ownerField: string,
): void {
  if (principal.kind === 'sub' && Object.hasOwn(values, ownerField))
    throw new ForbiddenError(`A sub key cannot change the owner field '${ownerField}'.`);
}

/** Writes of one item are queued in-process under this key (collection namespace + id). */
function writeKey(physical: string, id: string): string {
  return JSON.stringify([physical, id]);
}

/** No item to write: 404, or 412 under If-Match (there is no representation to match). */
function notFound(collection: string, ifMatch: IfMatch): DomainError {
  return ifMatch.kind === 'absent'
    ? new ItemNotFoundError(collection)
    : new PreconditionFailedError(null);
}

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
