import type { Document, Sort } from 'mongodb';
import { ValidationFailedError, type FieldError } from '../../common/errors';
import type { ListQuery } from '../../common/http/list-query';
import {
  keepsGreater,
  parseTimestampCursor,
  type KeysetSide,
} from '../../common/pagination/keyset';
import { MAX_INDEX_FIELDS } from './data.constants';
import { spelledNumber, TIMESTAMP_FIELDS } from './filter-operators';
import { orderPathProblem } from './json-guard';

/**
 * The order, page size and keyset cursors of an item list. A list is sorted by one or more
 * fields and then by `_id`, so every item has one place in the order; a cursor is the sort
 * values and the `_id` of the last item seen, and a walk visits every item exactly once.
 */

export type CursorValue = string | number | Date;

export interface SortKey {
  path: string;
  direction: 1 | -1;
}

/** A position in the order: one value per sort key and, optionally, the `_id` that breaks ties. */
export interface ListCursor {
  values: CursorValue[];
  /** The key from which no stored value can equal the cursor's (sub-millisecond timestamps). */
  inexactFrom?: number;
  id?: string;
}

export interface ListPlan {
  /** The client's sort keys; `_id` closes the order unless it is among them already. */
  sort: SortKey[];
  limit: number;
  after?: ListCursor;
  before?: ListCursor;
  /** before[] alone: the scan runs against the sort order; the caller reverses the page. */
  reversed: boolean;
}

/** Most fields one sort may name: what one compound index can serve besides `_id`. */
export const MAX_SORT_FIELDS = MAX_INDEX_FIELDS;

/**
 * `sort=a,-b`: a `-` makes a field descending, no sign ascending. A single field without a sign
 * follows `sortOrder` (default desc), as it always has; several fields, or a signed one, name
 * their own directions and refuse `sortOrder`.
 */
export function sortKeys(query: ListQuery, errors: FieldError[]): SortKey[] {
  const text = query.sort ?? '_id';
  const parts = text.split(',');
  const signed = parts.length > 1 || text.startsWith('-');
  if (signed && query.sortOrderGiven) {
    errors.push({
      field: 'sortOrder',
      message: 'goes with a single unsigned sort field; write sort=a,-b for directions',
    });
  }
  if (parts.length > MAX_SORT_FIELDS) {
    errors.push({ field: 'sort', message: `must name at most ${MAX_SORT_FIELDS} fields` });
    return [];
  }
  const keys: SortKey[] = [];
  for (const part of parts) {
    const descending = part.startsWith('-');
    const path = descending ? part.slice(1) : part;
    const problem = orderPathProblem(path);
    if (problem) errors.push({ field: 'sort', message: `field path ${problem}` });
    else if (keys.some((key) => key.path === path))
      errors.push({ field: 'sort', message: `names '${path}' twice` });
    else if (keys.some((key) => key.path === '_id'))
      errors.push({ field: 'sort', message: '_id is unique: no field can follow it' });
    else {
      const ascending = signed ? !descending : query.sortOrder === 'asc';
      keys.push({ path, direction: ascending ? 1 : -1 });
    }
  }
  return keys;
}

/** The whole order: the sort keys, then `_id` in the direction of the last key. */
function fullOrder(sort: SortKey[]): SortKey[] {
  const last = sort.at(-1);
  if (!last) return [{ path: '_id', direction: -1 }];
  return last.path === '_id' ? sort : [...sort, { path: '_id', direction: last.direction }];
}

/**
 * Cursor values compare like the stored values they stand for: `_createdAt`/`_updatedAt` as RFC
 * 3339 dates, `_id` as the string it is, anything numeric as a number, the rest as strings.
 */
function readCursorValue(
  path: string,
  text: string,
  greater: boolean,
): { value: CursorValue; inexact?: boolean } | { error: string } {
  if (TIMESTAMP_FIELDS.has(path)) return parseTimestampCursor(text, greater);
  if (path === '_id') return { value: text };
  return { value: spelledNumber(text) ?? text };
}

function readCursor(
  side: KeysetSide,
  query: ListQuery,
  sort: SortKey[],
  errors: FieldError[],
): ListCursor | undefined {
  const raw = query[side];
  const given = Object.keys(raw);
  if (given.length === 0) return undefined;
  const before = errors.length;
  const names = sort.map((key) => key.path);
  for (const field of given) {
    if (field !== '_id' && !names.includes(field))
      errors.push({
        field: `${side}[${field}]`,
        message:
          names.length === 1
            ? `must name the sort field (sort=${names[0]}) or _id; add sort=${field} to page by ${field}`
            : `must name a sort field (sort=${query.sort}) or _id`,
      });
  }
  const values: CursorValue[] = [];
  let inexactFrom: number | undefined;
  sort.forEach((key, i) => {
    const text = raw[key.path];
    if (text === undefined) {
      errors.push({
        field: `${side}[${key.path}]`,
        message: `needs a value: the cursor is the (${orderPaths({ sort }).join(', ')}) of the last item seen`,
      });
      return;
    }
    const parsed = readCursorValue(key.path, text, keepsGreater(side, key.direction === 1));
    if ('error' in parsed) errors.push({ field: `${side}[${key.path}]`, message: parsed.error });
    else {
      values.push(parsed.value);
      if (parsed.inexact && inexactFrom === undefined) inexactFrom = i;
    }
  });
  if (errors.length > before) return undefined;
  const id = names.includes('_id') ? undefined : raw._id;
  return {
    values,
    ...(inexactFrom !== undefined ? { inexactFrom } : {}),
    ...(id !== undefined ? { id } : {}),
  };
}

/** Sort, directions, limit and keyset cursors of a list request. */
export function listPlan(query: ListQuery): ListPlan {
  const errors: FieldError[] = [];
  const sort = sortKeys(query, errors);
  const after = errors.length === 0 ? readCursor('after', query, sort, errors) : undefined;
  const before = errors.length === 0 ? readCursor('before', query, sort, errors) : undefined;
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return {
    sort,
    limit: query.limit,
    ...(after ? { after } : {}),
    ...(before ? { before } : {}),
    // before[] alone asks for the page right before it (keyset.ts, walksBackwards).
    reversed: before !== undefined && after === undefined,
  };
}

/**
 * A keyset bound: the items past the cursor in the order, as the lexicographic comparison
 * "past on the first key, or equal on it and past on the next, …", ending with `_id` when the
 * cursor has one. A key from which the cursor is inexact cannot be equal, so the expansion
 * stops there.
 */
export function cursorFilter(plan: ListPlan, side: KeysetSide, cursor: ListCursor): Document {
  const keys: { path: string; direction: 1 | -1; value: CursorValue }[] = plan.sort.map(
    (key, i) => ({ ...key, value: cursor.values[i] as CursorValue }),
  );
  const last = plan.sort.at(-1);
  if (cursor.id !== undefined && cursor.inexactFrom === undefined && last)
    keys.push({ path: '_id', direction: last.direction, value: cursor.id });
  const stop = cursor.inexactFrom ?? keys.length - 1;
  const branches: Document[] = [];
  for (let i = 0; i <= stop && i < keys.length; i++) {
    const branch: Document = {};
    for (const earlier of keys.slice(0, i)) branch[earlier.path] = earlier.value;
    const key = keys[i] as (typeof keys)[number];
    const op = keepsGreater(side, key.direction === 1) ? '$gt' : '$lt';
    branch[key.path] = { [op]: key.value };
    branches.push(branch);
  }
  return branches.length === 1 ? (branches[0] as Document) : { $or: branches };
}

export function toMongoSort(plan: ListPlan): Sort {
  const sort: Record<string, 1 | -1> = {};
  for (const { path, direction } of fullOrder(plan.sort))
    sort[path] = plan.reversed ? (direction === 1 ? -1 : 1) : direction;
  return sort;
}

/** The fields of the full order (sort keys, then `_id`), for cursors and index advice. */
export function orderPaths(plan: Pick<ListPlan, 'sort'>): string[] {
  return fullOrder(plan.sort).map((key) => key.path);
}
