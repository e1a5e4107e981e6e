import type { Document, Filter, Sort } from 'mongodb';
import { ValidationFailedError, type FieldError } from '../common/errors';
import type { ListQuery } from '../common/http/list-query';
import { fieldPathProblem, type Guarded, type JsonScalar } from './json-guard';

/**
 * Server-built query parts. Client input reaches MongoDB only as field paths that passed the
 * guard and as scalar values placed by this module; operators are always the server's.
 */

/** Confines a sub caller to the items whose owner field holds its owner value. */
export interface OwnerScope {
  field: string;
  value: string;
}

export type Condition =
  /** The field equals one of the values (query strings: "5" matches "5" and 5). */
  | { kind: 'eq'; path: string; anyOf: JsonScalar[] }
  | { kind: 'exists'; path: string; exists: boolean };

export interface ItemMatch {
  scope: OwnerScope | null;
  conditions: Condition[];
}

/** What the filters run against: documents with a string `_id`. */
export type ItemDocument = Document & { _id: string };
type ItemFilter = Filter<ItemDocument>;

export type CursorValue = string | number | Date;

/** Keyset position: items strictly after (in the sort order) the value, then the id. */
export interface Cursor {
  op: '$gt' | '$lt';
  value: CursorValue;
  tieId?: string;
}

export interface ListPlan {
  sortPath: string;
  direction: 1 | -1;
  limit: number;
  cursor: Cursor | null;
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
export const TIMESTAMP_FIELDS = new Set(['_createdAt', '_updatedAt']);

/** A query-string value matches itself as a string, or the number, boolean or null it spells. */
export function coerceQueryValue(raw: string): JsonScalar[] {
  const values: JsonScalar[] = [raw];
  if (NUMBER.test(raw) && Number.isFinite(Number(raw))) values.push(Number(raw));
  else if (raw === 'true') values.push(true);
  else if (raw === 'false') values.push(false);
  else if (raw === 'null') values.push(null);
  return values;
}

function pathOrError(path: string, field: string, errors: FieldError[]): boolean {
  const problem = fieldPathProblem(path);
  if (problem) errors.push({ field, message: `field path ${problem}` });
  return problem === null;
}

/** Equality (`k=v`, `filter[k]=v`) and existence (`existsFilter[k]`) conditions of a query string. */
export function queryConditions(query: ListQuery): Condition[] {
  const errors: FieldError[] = [];
  const conditions: Condition[] = [];
  for (const [path, raw] of Object.entries(query.filters)) {
    if (pathOrError(path, path, errors))
      conditions.push({ kind: 'eq', path, anyOf: coerceQueryValue(raw) });
  }
  for (const [path, exists] of Object.entries(query.exists)) {
    if (pathOrError(path, `existsFilter[${path}]`, errors))
      conditions.push({ kind: 'exists', path, exists });
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return conditions;
}

/** Conditions of a body `filter` (already guarded: scalar values keep their JSON types). */
export function bodyConditions(filter: Guarded<Record<string, JsonScalar>> | null): Condition[] {
  if (!filter) return [];
  return Object.entries(filter).map(([path, value]) => ({ kind: 'eq', path, anyOf: [value] }));
}

/** The `{indexName}/{indexValue}` part of an item route. */
export function pathCondition(indexName: string, indexValue: string): Condition {
  if (indexName === '_id') return { kind: 'eq', path: '_id', anyOf: [indexValue] };
  const errors: FieldError[] = [];
  pathOrError(indexName, 'indexName', errors);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return { kind: 'eq', path: indexName, anyOf: coerceQueryValue(indexValue) };
}

function cursorValue(path: string, raw: string, field: string, errors: FieldError[]): CursorValue {
  if (TIMESTAMP_FIELDS.has(path)) {
    const date = new Date(raw);
    if (!RFC3339.test(raw) || Number.isNaN(date.getTime()))
      errors.push({ field, message: 'must be an RFC 3339 timestamp' });
    return date;
  }
  if (path === '_id') return raw;
  return NUMBER.test(raw) && Number.isFinite(Number(raw)) ? Number(raw) : raw;
}

/** Sort, direction, limit and keyset cursor of a list request. */
export function listPlan(query: ListQuery): ListPlan {
  const errors: FieldError[] = [];
  const sortPath = query.sort ?? '_id';
  pathOrError(sortPath, 'sort', errors);
  const direction = query.sortOrder === 'asc' ? 1 : -1;
  const sides = [
    ['after', query.after],
    ['before', query.before],
  ] as const;
  const used = sides.filter(([, values]) => Object.keys(values).length > 0);
  let cursor: Cursor | null = null;
  if (used.length > 1) {
    errors.push({ field: 'before', message: 'use either before[...] or after[...], not both' });
  } else if (used.length === 1) {
    const [side, values] = used[0] as (typeof sides)[number];
    for (const key of Object.keys(values)) {
      if (key !== sortPath && key !== '_id')
        errors.push({
          field: `${side}[${key}]`,
          message: `must name the sort field (${sortPath}) or _id`,
        });
    }
    // "after" in ascending order and "before" in descending order both mean greater.
    const op = (side === 'after') === (direction === 1) ? '$gt' : '$lt';
    const main = values[sortPath];
    const id = values._id;
    if (main !== undefined) {
      const value = cursorValue(sortPath, main, `${side}[${sortPath}]`, errors);
      cursor = { op, value, ...(id !== undefined && sortPath !== '_id' ? { tieId: id } : {}) };
    } else if (id !== undefined) {
      errors.push({
        field: `${side}[_id]`,
        message: `is a tie-breaker: give ${side}[${sortPath}] too`,
      });
    }
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return { sortPath, direction, limit: query.limit, cursor };
}

function conditionFilter(condition: Condition): ItemFilter {
  if (condition.kind === 'exists') return { [condition.path]: { $exists: condition.exists } };
  const { path, anyOf } = condition;
  // A null in a query means "the field holds null", not "the field is missing".
  const nullable = anyOf.includes(null);
  if (anyOf.length === 1 && !nullable) return { [path]: anyOf[0] };
  return { [path]: nullable ? { $in: anyOf, $exists: true } : { $in: anyOf } };
}

/** The MongoDB filter of a match; the owner scope and the client's conditions are `$and`-ed. */
export function toMongoFilter(
  match: ItemMatch,
  cursor: Cursor | null = null,
  sortPath = '_id',
): ItemFilter {
  const clauses: ItemFilter[] = [];
  if (match.scope) clauses.push({ [match.scope.field]: match.scope.value });
  for (const condition of match.conditions) clauses.push(conditionFilter(condition));
  if (cursor) {
    const { op, value, tieId } = cursor;
    clauses.push(
      tieId === undefined
        ? { [sortPath]: { [op]: value } }
        : { $or: [{ [sortPath]: { [op]: value } }, { [sortPath]: value, _id: { [op]: tieId } }] },
    );
  }
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0] as ItemFilter;
  return { $and: clauses };
}

export function toMongoSort(plan: ListPlan): Sort {
  return plan.sortPath === '_id'
    ? { _id: plan.direction }
    : { [plan.sortPath]: plan.direction, _id: plan.direction };
}
