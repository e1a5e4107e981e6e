import { Inject, Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { type CustomerPrincipal, ownerValueOf, tenantOf } from '../auth';
import {
  DomainError,
  ForbiddenError,
  ValidationFailedError,
  type FieldError,
} from '../common/errors';
import type { ListQuery } from '../common/http/list-query';
import { APP_CONFIG, type AppConfig } from '../config';
import {
  CollectionRegistryRepository,
  type RegisteredCollection,
} from './collection-registry.repository';
import {
  bodyConditions,
  listPlan,
  pathCondition,
  queryConditions,
  TIMESTAMP_FIELDS,
  type Condition,
  type ItemMatch,
  type OwnerScope,
} from './data-query';
import {
  DataItemRepository,
  type CreateIndexResult,
  type IndexInfo,
  type StoredItem,
} from './data-item.repository';
import { IndexSlotRepository } from './index-slot.repository';
import type { CreateDataIndexDto } from './dto/data-index.dto';
import {
  dataBudget,
  guardDocument,
  guardFieldName,
  guardFieldPath,
  guardFilter,
  isPlainObject,
  isScalar,
  type JsonBudget,
} from './json-guard';

export const COLLECTION_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const DEFAULT_OWNER_FIELD = 'userId';
const MANAGED_FIELDS = new Set(['_id', '_createdAt', '_updatedAt']);
const MAX_INDEX_FIELDS = 5;
/** Client-supplied ids: 1–128 characters without control characters. */
const CLIENT_ID_PATTERN = /^[^\p{Cc}]{1,128}$/u;

export interface CreateItemInput {
  item: unknown;
  uniqueField?: string;
  authField?: string;
}

export interface UpdateItemInput {
  values: unknown;
  filter?: unknown;
  authField?: string;
}

export interface DeleteItemInput {
  filter?: unknown;
  authField?: string;
}

export interface ItemPage {
  items: StoredItem[];
  /** Query parameters of the next page (keyset), or null when this is the last one. */
  next: Record<string, string> | null;
}

export interface CollectionSummary {
  name: string;
  indexes: IndexInfo[];
}

function sameFields(a: Record<string, number>, b: Record<string, number>): boolean {
  const left = Object.entries(a);
  const right = Object.entries(b);
  return (
    left.length === right.length &&
    left.every(([field, dir], i) => right[i]?.[0] === field && Number(right[i]?.[1]) === dir)
  );
}

function valueAt(item: StoredItem, path: string): unknown {
  let current: unknown = item;
  for (const segment of path.split('.')) {
    if (!isPlainObject(current) || !Object.hasOwn(current, segment)) return undefined;
    current = current[segment];
  }
  return current;
}

/**
 * The rules of tenant data: namespaces, ownership, quotas, ambiguity. Client JSON goes through
 * the guard first; the repositories receive only guarded documents and server-built conditions.
 */
@Injectable()
export class DataService {
  private readonly budget: JsonBudget;

  constructor(
    private readonly registry: CollectionRegistryRepository,
    private readonly items: DataItemRepository,
    private readonly indexSlots: IndexSlotRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.budget = dataBudget(config.limits);
  }

  // ---- collections ----------------------------------------------------------------------

  async listCollections(principal: CustomerPrincipal): Promise<CollectionSummary[]> {
    const entries = await this.registry.listFor(tenantOf(principal), principal.branch);
    return Promise.all(
      entries.map(async (entry) => ({
        name: entry.name,
        indexes: await this.items.listIndexes(entry.physical),
      })),
    );
  }

  private checkName(name: string): void {
    if (!COLLECTION_NAME_PATTERN.test(name))
      throw new DomainError(
        'INVALID_COLLECTION_NAME',
        'Collection names are 1-64 characters: a letter, then letters, digits, _ or -.',
        [{ field: 'collection', message: 'must match ^[A-Za-z][A-Za-z0-9_-]{0,63}$' }],
      );
  }

  /** The caller's collection, or null when it does not exist (reads never create one). */
  private async existing(
    principal: CustomerPrincipal,
    name: string,
  ): Promise<RegisteredCollection | null> {
    this.checkName(name);
    return this.registry.find(tenantOf(principal), principal.branch, name);
  }

  /** The caller's collection, created (registered) on first write within the quota. */
  private async forWrite(
    principal: CustomerPrincipal,
    name: string,
  ): Promise<RegisteredCollection> {
    const found = await this.existing(principal, name);
    if (found) return found;
    const max = this.config.limits.maxCollections;
    const entry = await this.registry.register(tenantOf(principal), principal.branch, name, max);
    if (!entry)
      throw new DomainError(
        'COLLECTION_QUOTA_EXCEEDED',
        `This namespace has ${max} collections already, the most allowed.`,
      );
    return entry;
  }

  // ---- ownership --------------------------------------------------------------------------

  private ownerField(authField: string | undefined, field = 'authField'): string {
    if (authField === undefined) return DEFAULT_OWNER_FIELD;
    const name = guardFieldName(authField, field);
    if (MANAGED_FIELDS.has(name))
      throw new ValidationFailedError([{ field, message: `'${name}' cannot be the owner field` }]);
    return name;
  }

  /** Sub callers are confined to their own items; root and team callers see the namespace. */
  private scopeOf(principal: CustomerPrincipal, ownerField: string): OwnerScope | null {
    return principal.kind === 'sub' ? { field: ownerField, value: ownerValueOf(principal) } : null;
  }

  // ---- items ------------------------------------------------------------------------------

  async createItem(
    principal: CustomerPrincipal,
    collection: string,
    input: CreateItemInput,
  ): Promise<StoredItem> {
    this.checkName(collection);
    const item = guardDocument(input.item, 'item', this.budget);
    const ownerField = this.ownerField(input.authField);
    const uniqueField =
      input.uniqueField === undefined ? null : guardFieldName(input.uniqueField, 'uniqueField');

    const managed = ['_createdAt', '_updatedAt'].filter((f) => Object.hasOwn(item, f));
    if (managed.length > 0)
      throw new ValidationFailedError(
        managed.map((f) => ({ field: `item.${f}`, message: 'is set by the server' })),
      );
    let id: string;
    if (Object.hasOwn(item, '_id')) {
      const given = item._id;
      if (typeof given !== 'string' || !CLIENT_ID_PATTERN.test(given))
        throw new ValidationFailedError([
          { field: 'item._id', message: 'must be a string of 1-128 characters, no controls' },
        ]);
      id = given;
      delete item._id;
    } else {
      id = new Types.ObjectId().toHexString();
    }

    const ownerValue = ownerValueOf(principal);
    if (principal.kind === 'sub' || !Object.hasOwn(item, ownerField)) item[ownerField] = ownerValue;

    let uniqueValue: unknown;
    if (uniqueField !== null) {
      uniqueValue = uniqueField === '_id' ? id : item[uniqueField];
      if (uniqueField !== '_id' && !Object.hasOwn(item, uniqueField))
        throw new ValidationFailedError([
          { field: 'uniqueField', message: `item has no field '${uniqueField}'` },
        ]);
      if (!isScalar(uniqueValue))
        throw new ValidationFailedError([
          { field: `item.${uniqueField}`, message: 'must be a string, number, boolean or null' },
        ]);
    }

    const target = await this.forWrite(principal, collection);
    const scope = this.scopeOf(principal, ownerField);
    // Refuses a taken uniqueField value in the caller's scope, naming the item that holds it.
    const refuseTakenValue = async (): Promise<void> => {
      if (uniqueField === null || !isScalar(uniqueValue)) return;
      const existingId = await this.items.findIdByValue(
        target.physical,
        scope,
        uniqueField,
        uniqueValue,
      );
      if (existingId !== null) throw this.duplicate(uniqueField, existingId);
    };
    await refuseTakenValue();

    const result = await this.items.insert(target.physical, id, item, new Date());
    if (result.ok) return result.item;
    // A unique index refused the item: name the item it collides with when the caller may see it.
    await refuseTakenValue();
    if (await this.items.existsById(target.physical, id)) throw this.duplicate('_id', id);
    throw new DomainError('DUPLICATE_ITEM', 'A unique index of the collection refuses the item.');
  }

  private duplicate(field: string, existingId: string): DomainError {
    return new DomainError(
      'DUPLICATE_ITEM',
      `An item with this ${field} exists already (_id ${existingId}).`,
      undefined,
      { existingId },
    );
  }

  async listItems(
    principal: CustomerPrincipal,
    collection: string,
    query: ListQuery,
  ): Promise<ItemPage> {
    this.checkName(collection);
    const match = this.queryMatch(principal, query);
    const plan = listPlan(query);
    const target = await this.existing(principal, collection);
    if (!target) return { items: [], next: null };
    const found = await this.items.list(target.physical, match, plan);
    const items = found.slice(0, plan.limit);
    const last = items.at(-1);
    let next: Record<string, string> | null = null;
    if (found.length > plan.limit && last && Object.keys(query.before).length === 0) {
      const value = valueAt(last, plan.sortPath);
      const text = this.cursorText(plan.sortPath, value);
      if (text !== null) {
        next = { [`after[${plan.sortPath}]`]: text };
        if (plan.sortPath !== '_id') next['after[_id]'] = last._id;
      }
    }
    return { items, next };
  }

  /** A sort value as a cursor parameter, when it reads back as the same value. */
  private cursorText(sortPath: string, value: unknown): string | null {
    if (value instanceof Date) return TIMESTAMP_FIELDS.has(sortPath) ? value.toISOString() : null;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    if (typeof value === 'string') {
      if (sortPath === '_id') return value;
      const numeric = value.trim() !== '' && Number.isFinite(Number(value));
      return numeric ? null : value;
    }
    return null;
  }

  async countItems(
    principal: CustomerPrincipal,
    collection: string,
    query: ListQuery,
  ): Promise<number> {
    this.checkName(collection);
    const match = this.queryMatch(principal, query);
    const target = await this.existing(principal, collection);
    if (!target) return 0;
    if (match.scope === null && match.conditions.length === 0)
      return this.items.estimatedCount(target.physical);
    return this.items.count(target.physical, match);
  }

  async getItem(
    principal: CustomerPrincipal,
    collection: string,
    indexName: string,
    indexValue: string,
    query: ListQuery,
  ): Promise<StoredItem> {
    this.checkName(collection);
    const match = this.queryMatch(principal, query, pathCondition(indexName, indexValue));
    const target = await this.existing(principal, collection);
    if (!target) throw this.notFound(collection);
    // An _id names at most one item; any other field needs a second match to detect ambiguity.
    const found = await this.items.findMatching(
      target.physical,
      match,
      indexName === '_id' ? 1 : 2,
    );
    return this.single(found, collection);
  }

  async updateItem(
    principal: CustomerPrincipal,
    collection: string,
    indexName: string,
    indexValue: string,
    input: UpdateItemInput,
  ): Promise<StoredItem> {
    this.checkName(collection);
    const values = guardDocument(input.values, 'values', this.budget);
    const ownerField = this.ownerField(input.authField);
    const keys = Object.keys(values);
    if (keys.length === 0)
      throw new ValidationFailedError([{ field: 'values', message: 'must not be empty' }]);
    const managed = keys.filter((k) => MANAGED_FIELDS.has(k));
    if (managed.length > 0)
      throw new ValidationFailedError(
        managed.map((k) => ({ field: `values.${k}`, message: 'is managed by the server' })),
      );
    if (principal.kind === 'sub' && Object.hasOwn(values, ownerField))
      throw new ForbiddenError(`A sub key cannot change the owner field '${ownerField}'.`);
    const match = this.bodyMatch(principal, ownerField, indexName, indexValue, input.filter);

    const target = await this.existing(principal, collection);
    if (!target) throw this.notFound(collection);
    const id = await this.singleId(target.physical, match, collection, indexName, indexValue);
    const updated = await this.items.updateById(target.physical, id, match, values, new Date());
    // The item stopped matching (or was deleted) between the lookup and the update.
    if (!updated) throw this.notFound(collection);
    return updated;
  }

  async deleteItem(
    principal: CustomerPrincipal,
    collection: string,
    indexName: string,
    indexValue: string,
    input: DeleteItemInput,
  ): Promise<void> {
    this.checkName(collection);
    const ownerField = this.ownerField(input.authField);
    const match = this.bodyMatch(principal, ownerField, indexName, indexValue, input.filter);
    const target = await this.existing(principal, collection);
    if (!target) throw this.notFound(collection);
    const id = await this.singleId(target.physical, match, collection, indexName, indexValue);
    if (!(await this.items.deleteById(target.physical, id, match))) throw this.notFound(collection);
  }

  private queryMatch(principal: CustomerPrincipal, query: ListQuery, path?: Condition): ItemMatch {
    const ownerField = this.ownerField(query.params.authField);
    const conditions = queryConditions(query);
    return {
      scope: this.scopeOf(principal, ownerField),
      conditions: path ? [path, ...conditions] : conditions,
    };
  }

  private bodyMatch(
    principal: CustomerPrincipal,
    ownerField: string,
    indexName: string,
    indexValue: string,
    filter: unknown,
  ): ItemMatch {
    const path = pathCondition(indexName, indexValue);
    const guarded = filter === undefined || filter === null ? null : guardFilter(filter, 'filter');
    return {
      scope: this.scopeOf(principal, ownerField),
      conditions: [path, ...bodyConditions(guarded)],
    };
  }

  /**
   * The id of the one item the match selects. An `_id` path selects at most one item, so the
   * conditional write that follows decides alone (one query instead of two).
   */
  private async singleId(
    physical: string,
    match: ItemMatch,
    collection: string,
    indexName: string,
    indexValue: string,
  ): Promise<string> {
    if (indexName === '_id') return indexValue;
    const ids = await this.items.findMatchingIds(physical, match, 2);
    if (ids.length > 1) throw this.ambiguous();
    const [id] = ids;
    if (id === undefined) throw this.notFound(collection);
    return id;
  }

  private single(found: StoredItem[], collection: string): StoredItem {
    if (found.length > 1) throw this.ambiguous();
    const [item] = found;
    if (!item) throw this.notFound(collection);
    return item;
  }

  private notFound(collection: string): DomainError {
    return new DomainError('ITEM_NOT_FOUND', `No item of collection '${collection}' matches.`);
  }

  private ambiguous(): DomainError {
    return new DomainError(
      'AMBIGUOUS_MATCH',
      'More than one item matches; add a filter or address the item by _id. Nothing was changed.',
    );
  }

  // ---- indexes ----------------------------------------------------------------------------

  async listIndexes(principal: CustomerPrincipal, collection: string): Promise<IndexInfo[]> {
    const target = await this.existing(principal, collection);
    return target ? this.items.listIndexes(target.physical) : [];
  }

  async createIndex(
    principal: CustomerPrincipal,
    collection: string,
    input: CreateDataIndexDto,
  ): Promise<IndexInfo> {
    this.checkName(collection);
    const fields = this.indexFields(input);
    const unique = input.unique === true;
    const name =
      input.name ??
      Object.entries(fields)
        .map(([f, d]) => `${f}_${d}`)
        .join('_');

    const target = await this.forWrite(principal, collection);
    const existing = await this.items.listIndexes(target.physical);
    const byName = existing.find((i) => i.name === name);
    if (byName) {
      if (sameFields(byName.fields, fields) && byName.unique === unique) return byName;
      throw new DomainError(
        'INDEX_CONFLICT',
        `An index named '${name}' exists with another definition.`,
      );
    }
    const byFields = existing.find((i) => sameFields(i.fields, fields));
    if (byFields) {
      if (input.name === undefined && byFields.unique === unique) return byFields;
      throw new DomainError(
        'INDEX_CONFLICT',
        `An index on these fields exists already as '${byFields.name}'.`,
      );
    }
    const max = this.config.limits.maxIndexes;
    const natives = existing.map((i) => i.name).filter((n) => n !== '_id_');
    const claim = await this.indexSlots.claim(target.physical, name, max, natives);
    if (claim === 'full')
      throw new DomainError(
        'INDEX_QUOTA_EXCEEDED',
        `The collection has ${max} indexes besides _id, the most allowed.`,
      );
    // Only a slot this request claimed is given back; a 'held' one belongs to a concurrent
    // request creating the same index.
    const releaseClaim = () =>
      claim === 'claimed' ? this.indexSlots.release(target.physical, name) : Promise.resolve();
    let result: CreateIndexResult;
    try {
      result = await this.items.createIndex(target.physical, name, fields, unique);
    } catch (error) {
      await releaseClaim();
      throw error;
    }
    if (result === 'duplicates') {
      await releaseClaim();
      throw new DomainError(
        'UNIQUE_INDEX_DUPLICATES',
        'Existing items share values of these fields, so the unique index cannot be built. Remove the duplicates first.',
      );
    }
    if (result === 'conflict') {
      await releaseClaim();
      throw new DomainError(
        'INDEX_CONFLICT',
        `An index named '${name}' or on these fields was created concurrently with another definition.`,
      );
    }
    return { name, fields, unique };
  }

  private indexFields(input: CreateDataIndexDto): Record<string, 1 | -1> {
    const hasField = input.field !== undefined;
    const hasFields = input.fields !== undefined && input.fields !== null;
    if (hasField === hasFields)
      throw new ValidationFailedError([
        { field: 'field', message: 'give either field (with sort) or fields' },
      ]);
    if (hasField) return { [guardFieldPath(input.field, 'field')]: input.sort === 'desc' ? -1 : 1 };
    if (input.sort !== undefined) {
      throw new ValidationFailedError([
        { field: 'sort', message: 'goes with field; give directions inside fields' },
      ]);
    }
    const raw = input.fields;
    if (!isPlainObject(raw))
      throw new ValidationFailedError([{ field: 'fields', message: 'must be a JSON object' }]);
    const entries = Object.keys(raw);
    if (entries.length === 0 || entries.length > MAX_INDEX_FIELDS)
      throw new ValidationFailedError([
        { field: 'fields', message: `must name 1 to ${MAX_INDEX_FIELDS} fields` },
      ]);
    const fields: Record<string, 1 | -1> = {};
    const errors: FieldError[] = [];
    for (const key of entries) {
      const direction = raw[key];
      try {
        guardFieldPath(key, `fields.${key}`);
      } catch (error) {
        if (error instanceof ValidationFailedError) errors.push(...(error.errors ?? []));
        continue;
      }
      if (direction !== 1 && direction !== -1)
        errors.push({ field: `fields.${key}`, message: 'must be 1 or -1' });
      else fields[key] = direction;
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
    return fields;
  }

  async deleteIndex(principal: CustomerPrincipal, collection: string, name: string): Promise<void> {
    this.checkName(collection);
    if (name === '_id_')
      throw new DomainError('PROTECTED_INDEX', 'The _id_ index cannot be removed.');
    const target = await this.existing(principal, collection);
    const existing = target ? await this.items.listIndexes(target.physical) : [];
    if (!target || !existing.some((i) => i.name === name))
      throw new DomainError(
        'INDEX_NOT_FOUND',
        `Collection '${collection}' has no index '${name}'.`,
      );
    await this.items.dropIndex(target.physical, name);
    await this.indexSlots.release(target.physical, name);
  }
}
