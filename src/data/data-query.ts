import type { Document, Filter, Sort } from 'mongodb';
import { ValidationFailedError, type FieldError } from '../common/errors';
import type { ListQuery } from '../common/http/list-query';
import {
  keepsGreater,
  parseTimestampCursor,
  readKeysetSide,
  walksBackwards,
  type KeysetCursor,
  type KeysetRules,
  type KeysetSide,
} from '../common/pagination/keyset';
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
  /** A write under If-Match: the revisions it accepts (item-revision.ts builds it). */
  revision?: Document;
}

/** What the filters run against: documents with a string `_id`. */
export type ItemDocument = Document & { _id: string };
type ItemFilter = Filter<ItemDocument>;

export type CursorValue = string | number | Date;

export interface ListPlan {
  sortPath: string;
  direction: 1 | -1;
  limit: number;
  after?: KeysetCursor<CursorValue>;
  before?: KeysetCursor<CursorValue>;
  /** before[] alone: the scan runs against the sort order; the caller reverses the page. */
  reversed: boolean;
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
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

/**
 * Cursor values compare like the stored values they stand for: `_createdAt`/`_updatedAt` as RFC
 * 3339 dates, `_id` as the string it is, anything numeric as a number, the rest as strings.
 */
function cursorRules(sortPath: string): KeysetRules<CursorValue> {
  return {
    sortField: sortPath,
    idField: '_id',
    parseValue: (field, text, greater) => {
      if (TIMESTAMP_FIELDS.has(field)) return parseTimestampCursor(text, greater);
      if (field === '_id') return { value: text };
      return { value: NUMBER.test(text) && Number.isFinite(Number(text)) ? Number(text) : text };
    },
    parseId: (text) => ({ value: text }),
  };
}

/** Sort, direction, limit and keyset cursors of a list request. */
export function listPlan(query: ListQuery): ListPlan {
  const errors: FieldError[] = [];
  const sortPath = query.sort ?? '_id';
  const validSort = pathOrError(sortPath, 'sort', errors);
  const ascending = query.sortOrder === 'asc';
  const rules = cursorRules(sortPath);
  const after = readKeysetSide('after', query.after, rules, ascending, errors);
  const before = readKeysetSide('before', query.before, rules, ascending, errors);
  if (errors.length > 0 || !validSort) throw new ValidationFailedError(errors);
  return {
    sortPath,
    direction: ascending ? 1 : -1,
    limit: query.limit,
    ...(after ? { after } : {}),
    ...(before ? { before } : {}),
    reversed: walksBackwards({ after, before }),
  };
}

function conditionFilter(condition: Condition): ItemFilter {
  if (condition.kind === 'exists') return { [condition.path]: { $exists: condition.exists } };
  const { path, anyOf } = condition;
  // A null in a query means "the field holds null", not "the field is missing".
  const nullable = anyOf.includes(null);
  if (anyOf.length === 1 && !nullable) return { [path]: anyOf[0] };
  return { [path]: nullable ? { $in: anyOf, $exists: true } : { $in: anyOf } };
}

/** A keyset bound: strictly past the value, or at the value and past the id. */
function cursorFilter(
  sortPath: string,
  side: KeysetSide,
  cursor: KeysetCursor<CursorValue>,
  ascending: boolean,
): ItemFilter {
  const op = keepsGreater(side, ascending) ? '$gt' : '$lt';
  const { value, id } = cursor;
  return id === undefined || sortPath === '_id'
    ? { [sortPath]: { [op]: value } }
    : { $or: [{ [sortPath]: { [op]: value } }, { [sortPath]: value, _id: { [op]: id } }] };
}

/**
 * The MongoDB filter of a match (and of a list plan's cursors); the owner scope, the client's
 * conditions and the cursors are `$and`-ed.
 */
export function toMongoFilter(match: ItemMatch, plan?: ListPlan): ItemFilter {
  const clauses: ItemFilter[] = [];
  if (match.scope) clauses.push({ [match.scope.field]: match.scope.value });
  for (const condition of match.conditions) clauses.push(conditionFilter(condition));
  if (match.revision) clauses.push(match.revision);
  if (plan) {
    const ascending = plan.direction === 1;
    if (plan.after) clauses.push(cursorFilter(plan.sortPath, 'after', plan.after, ascending));
    if (plan.before) clauses.push(cursorFilter(plan.sortPath, 'before', plan.before, ascending));
  }
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0] as ItemFilter;
  return { $and: clauses };
}

export function toMongoSort(plan: ListPlan): Sort {
  const direction: 1 | -1 = plan.reversed ? (plan.direction === 1 ? -1 : 1) : plan.direction;
  return plan.sortPath === '_id'
    ? { _id: direction }
    : { [plan.sortPath]: direction, _id: direction };
}
