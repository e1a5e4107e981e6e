import { DomainError, ValidationFailedError } from '../../common/errors';
import { CLIENT_ID_PATTERN, DEFAULT_OWNER_FIELD, MANAGED_FIELDS } from './data.constants';
import { parseListQuery, type ListQuery } from '../../common/http/list-query';
import { bodyFilterConditions } from './body-filters';
import { queryConditions, type Condition, type FilterLimits } from './filter-operators';
import { listPlan, type ListPlan } from './list-plan';
import { parseProjection, type Projection } from './projection';
import type {
  BulkCreateDataItemsDto,
  DeleteDataItemsDto,
  UpdateDataItemsDto,
} from '../items/dto/data-batch.dto';
import type {
  CreateDataItemDto,
  DeleteDataItemDto,
  UpdateDataItemDto,
} from '../items/dto/data-item.dto';
import { guardFieldName, readDocument } from './json-guard';
import { SEARCH_PARAM } from '../search/search-query';
import { type Guarded, type JsonBudget, type JsonObject } from '../../common/json';

/** A bulk create's item: its guarded request, or why it was refused before any write. */
export type BulkItemInput = { request: NewItemRequest } | { refused: DomainError };

/**
 * The shape checks of data request bodies: what a body must look like, whoever sends it. They
 * turn the validated DTOs into guarded commands, so the services see only guarded JSON and keep
 * only the rules that depend on the caller and the stored data (ownership, quotas, uniqueness,
 * ambiguity).
 */

/** An item's `_createdAt` and `_updatedAt`: set by the server, or kept by an import. */
export interface KeptTimes {
  createdAt: Date;
  updatedAt: Date;
}

export interface NewItemRequest {
  /** The client's `_id`, or null: the server makes one. */
  id: string | null;
  /** The item without `_id`. */
  item: Guarded<JsonObject>;
  uniqueField: string | null;
  ownerField: string;
  /** `return`: a taken uniqueField value answers the item holding it (find-or-create). */
  onConflict: 'error' | 'return';
  /**
   * An imported item (POST /import): it keeps its times when it has them, and a root or team
   * key's import writes its owner field as it is (none is added).
   */
  imported?: { times: KeptTimes | null };
}

export interface ItemChangeRequest {
  values: Guarded<JsonObject>;
  /** The body `filter`'s conditions (none when it is absent). */
  conditions: Condition[];
  ownerField: string;
}

export interface ItemRemovalRequest {
  conditions: Condition[];
  ownerField: string;
}

/**
 * What a read selects: the owner field (for sub callers' scope), the client's conditions and, on
 * the routes that search, `q` as given (its words depend on the collection's configuration).
 */
export interface ItemQuery {
  ownerField: string;
  conditions: Condition[];
  /** `q`, or null when absent (routes that do not search never set it). */
  search?: string | null;
}

/** A list: the selection, its order, page and cursors, and the fields to return. */
export interface ItemListQuery extends ItemQuery {
  plan: ListPlan;
  projection: Projection | null;
}

/** The owner field: `authField` (body or query) if given, else `userId`; never a managed field. */
export function ownerFieldOf(authField: string | undefined, field = 'authField'): string {
  if (authField === undefined) return DEFAULT_OWNER_FIELD;
  const name = guardFieldName(authField, field);
  if (MANAGED_FIELDS.has(name))
    throw new ValidationFailedError([{ field, message: `'${name}' cannot be the owner field` }]);
  return name;
}

/** Parameters that only a list reads (its order, page and cursors). */
const PAGING = /^(sort|sortOrder|limit|before\[.*\]|after\[.*\])$/;

/**
 * A data route's query string: filters with operators, `authField`, the list parameters and the
 * route's own `params`. A route that is not a list names what it refuses (`paging`, `fields`):
 * parameters it would ignore are a 400, not silently dropped.
 */
export function parseDataQuery(
  raw: Record<string, unknown>,
  limits: { listDefault: number; listMax: number },
  route: {
    params?: readonly string[];
    refuse?: { paging: boolean; fields: boolean };
    only?: string;
  },
): ListQuery {
  const { refuse } = route;
  if (refuse) {
    const refused = Object.keys(raw).filter(
      (key) => (refuse.paging && PAGING.test(key)) || (refuse.fields && key === 'fields'),
    );
    if (refused.length > 0)
      throw new ValidationFailedError(
        refused.map((field) => ({
          field,
          message: `is only accepted by ${route.only ?? 'GET /data/{collection}'}`,
        })),
      );
  }
  return parseListQuery(raw, {
    limitDefault: limits.listDefault,
    limitMax: limits.listMax,
    params: ['authField', 'fields', ...(route.params ?? [])],
    allowExists: true,
    operators: { repeatable: ['in', 'nin'] },
  });
}

/** A count's (or a single read's) query string: filters, and `q` where the route reads it. */
export function toItemQuery(query: ListQuery, limits: FilterLimits): ItemQuery {
  return {
    ownerField: ownerFieldOf(query.params.authField),
    conditions: queryConditions(query, limits),
    search: query.params[SEARCH_PARAM] ?? null,
  };
}

/** A list's query string. */
export function toItemListQuery(query: ListQuery, limits: FilterLimits): ItemListQuery {
  return {
    ...toItemQuery(query, limits),
    plan: listPlan(query),
    projection: parseProjection(query.params.fields),
  };
}

export function toNewItemRequest(body: CreateDataItemDto, budget: JsonBudget): NewItemRequest {
  const item = readDocument(body.item, 'item', budget);
  const ownerField = ownerFieldOf(body.authField);
  const uniqueField =
    body.uniqueField === undefined ? null : guardFieldName(body.uniqueField, 'uniqueField');
  const managed = ['_createdAt', '_updatedAt'].filter((f) => Object.hasOwn(item, f));
  if (managed.length > 0)
    throw new ValidationFailedError(
      managed.map((f) => ({ field: `item.${f}`, message: 'is set by the server' })),
    );
  const id = takeClientId(item);
  const onConflict = body.onConflict ?? 'error';
  if (onConflict === 'return' && uniqueField === null)
    throw new ValidationFailedError([
      { field: 'onConflict', message: "'return' needs uniqueField: the value that finds the item" },
    ]);
  return { id, item, uniqueField, ownerField, onConflict };
}

/** The item's own `_id`, taken out of it (null: the server makes one). */
export function takeClientId(item: Guarded<JsonObject>): string | null {
  if (!Object.hasOwn(item, '_id')) return null;
  const given = item._id;
  if (typeof given !== 'string' || !CLIENT_ID_PATTERN.test(given))
    throw new ValidationFailedError([
      { field: 'item._id', message: 'must be a string of 1-128 characters, no controls' },
    ]);
  delete item._id;
  return given;
}

export function toItemChangeRequest(
  body: UpdateDataItemDto,
  budget: JsonBudget,
  limits: FilterLimits,
): ItemChangeRequest {
  const values = readDocument(body.values, 'values', budget);
  const ownerField = ownerFieldOf(body.authField);
  const keys = Object.keys(values);
  if (keys.length === 0)
    throw new ValidationFailedError([{ field: 'values', message: 'must not be empty' }]);
  const managed = keys.filter((k) => MANAGED_FIELDS.has(k));
  if (managed.length > 0)
    throw new ValidationFailedError(
      managed.map((k) => ({ field: `values.${k}`, message: 'is managed by the server' })),
    );
  return { values, conditions: bodyFilterConditions(body.filter, 'filter', limits), ownerField };
}

export function toItemRemovalRequest(
  body: DeleteDataItemDto,
  limits: FilterLimits,
): ItemRemovalRequest {
  const ownerField = ownerFieldOf(body.authField);
  return { conditions: bodyFilterConditions(body.filter, 'filter', limits), ownerField };
}

/** The body `filter` of PUT and DELETE /data/{c}: required, with at least one condition. */
function requiredFilter(filter: unknown, limits: FilterLimits): Condition[] {
  if (filter === undefined || filter === null)
    throw new ValidationFailedError([
      {
        field: 'filter',
        message: 'is required: the items to write are the ones it selects (at least one condition)',
      },
    ]);
  const conditions = bodyFilterConditions(filter, 'filter', limits);
  if (conditions.length === 0)
    throw new ValidationFailedError([
      { field: 'filter', message: 'must hold at least one condition' },
    ]);
  return conditions;
}

/** PUT /data/{c}: the single-item change request, with the filter required. */
export function toItemsChangeRequest(
  body: UpdateDataItemsDto,
  budget: JsonBudget,
  limits: FilterLimits,
): ItemChangeRequest & { multi: boolean } {
  const conditions = requiredFilter(body.filter, limits);
  const change = toItemChangeRequest(
    { values: body.values, authField: body.authField },
    budget,
    limits,
  );
  return { ...change, conditions, multi: body.multi === true };
}

/** DELETE /data/{c} with a body: the filter required (no body at all is a drop). */
export function toItemsRemovalRequest(
  body: DeleteDataItemsDto,
  limits: FilterLimits,
): ItemRemovalRequest & { multi: boolean } {
  const conditions = requiredFilter(body.filter, limits);
  return { ownerField: ownerFieldOf(body.authField), conditions, multi: body.multi === true };
}

/**
 * POST /data/{c}/bulk: each item checked like a lone POST's; an item's problem is its own result,
 * not the request's. The list itself must hold 1 to `maxItems` items.
 */
export function toBulkInputs(
  body: BulkCreateDataItemsDto,
  budget: JsonBudget,
  maxItems: number,
): BulkItemInput[] {
  const { items } = body;
  if (!Array.isArray(items) || items.length === 0 || items.length > maxItems)
    throw new ValidationFailedError([
      { field: 'items', message: `must be an array of 1 to ${maxItems} items` },
    ]);
  // The shared parts are checked once: a wrong authField or uniqueField is the request's fault.
  ownerFieldOf(body.authField);
  if (body.uniqueField !== undefined) guardFieldName(body.uniqueField, 'uniqueField');
  return items.map((item): BulkItemInput => {
    try {
      return {
        request: toNewItemRequest(
          { item, uniqueField: body.uniqueField, authField: body.authField },
          budget,
        ),
      };
    } catch (error) {
      if (error instanceof DomainError) return { refused: error };
      throw error;
    }
  });
}
