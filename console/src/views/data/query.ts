import type { PageCursor, Schemas } from '@profile-data/client';

/** The operators of the list's filter language (docs/data.md, "Operators"). */
export const OPERATORS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'nin',
  'exists',
  'prefix',
] as const;
export type Operator = (typeof OPERATORS)[number];

export function isOperator(value: string): value is Operator {
  return OPERATORS.some((each) => each === value);
}

export interface Condition {
  field: string;
  op: Operator;
  value: string;
}

/** What the items view asks for: the filter rows, the sort, the projection and the page size. */
export interface ItemQuery {
  conditions: Condition[];
  sortField: string;
  sortOrder: 'asc' | 'desc';
  fields: string;
  limit: number;
}

export const DEFAULT_QUERY: ItemQuery = {
  conditions: [],
  sortField: '_id',
  sortOrder: 'asc',
  fields: '',
  limit: 50,
};

export type ItemFilter = Schemas['ItemFilter'];
type FilterOps = Exclude<ItemFilter[string], string>;

/** The rows that name a field: `{field: {op: value}}`, the client's query form. */
export function queryFilter(conditions: readonly Condition[]): ItemFilter {
  const filter: Record<string, FilterOps> = {};
  for (const { field, op, value } of conditions) {
    if (field.trim() === '') continue;
    const ops: FilterOps = { ...filter[field.trim()] };
    if (op === 'exists') ops.exists = value === 'false' ? 'false' : 'true';
    else ops[op] = value;
    filter[field.trim()] = ops;
  }
  return filter;
}

/** The filter, sort and projection as list, explain and count parameters. */
export function filterParams(query: ItemQuery): { filter?: ItemFilter } {
  const filter = queryFilter(query.conditions);
  return Object.keys(filter).length > 0 ? { filter } : {};
}

export function listParams(query: ItemQuery) {
  const fields = query.fields.trim();
  return {
    ...filterParams(query),
    sort: query.sortField.trim() || '_id',
    sortOrder: query.sortOrder,
    limit: query.limit,
    ...(fields !== '' ? { fields } : {}),
  };
}

/** The fields a cursor names: the sort field, then `_id` as the tie-breaker. */
export function cursorPaths(query: ItemQuery): string[] {
  const sort = query.sortField.trim() || '_id';
  return sort === '_id' ? ['_id'] : [sort, '_id'];
}

/** A number as the service spells it in a query (`5`, `-1.5`, not `007`). */
function spellsNumber(text: string): boolean {
  return /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text);
}

type BodyScalar = string | number | boolean | null;

/** Each JSON value an equality in the query string matches: the string and what it spells. */
function equalValues(text: string): BodyScalar[] {
  if (spellsNumber(text)) return [text, Number(text)];
  if (text === 'true' || text === 'false') return [text, text === 'true'];
  if (text === 'null') return [text, null];
  return [text];
}

function listValues(text: string): BodyScalar[] {
  return text.split(',').flatMap(equalValues);
}

/**
 * The same conditions as a body `filter` (PUT/DELETE /data/{c}), where JSON types are kept: an
 * equality becomes `in` over the string and the value it spells, so that a delete selects what
 * the count of the query string counted.
 */
export function bodyFilter(conditions: readonly Condition[]): Record<string, unknown> {
  const filter: Record<string, Record<string, unknown>> = {};
  for (const { field, op, value } of conditions) {
    const key = field.trim();
    if (key === '') continue;
    const ops = (filter[key] ??= {});
    const range = spellsNumber(value) ? Number(value) : value;
    switch (op) {
      case 'eq':
        ops.in = equalValues(value);
        break;
      case 'ne':
        ops.nin = equalValues(value);
        break;
      case 'in':
      case 'nin':
        ops[op] = listValues(value);
        break;
      case 'exists':
        ops.exists = value !== 'false';
        break;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        ops[op] = range;
        break;
      case 'prefix':
        ops.prefix = value;
        break;
    }
  }
  return filter;
}

/** A value at a dotted path of an item. */
export function valueAt(item: Record<string, unknown>, path: string): unknown {
  let current: unknown = item;
  for (const part of path.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** A sort value as a cursor spells it, or undefined when it cannot be one (docs/data.md). */
function cursorText(path: string, value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  if (path === '_id' || path === '_createdAt' || path === '_updatedAt') return value;
  return value.trim() !== '' && Number.isFinite(Number(value)) ? undefined : value;
}

/** A cursor at `item`: every path's value, or undefined when one cannot be written. */
export function cursorAt(
  item: Record<string, unknown>,
  paths: readonly string[],
): Record<string, string> | undefined {
  const cursor: Record<string, string> = {};
  for (const path of paths) {
    const text = cursorText(path, valueAt(item, path));
    if (text === undefined) return undefined;
    cursor[path] = text;
  }
  return cursor;
}

/** Where a page starts: after or before a cursor (`after[…]`, `before[…]`). */
export interface LinkCursor {
  side: 'after' | 'before';
  cursor: PageCursor;
}

/** A size in bytes as people read it. */
export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}

/** The query each collection's tabs share while the console is open. */
const stored = new Map<string, ItemQuery>();

export function storedQuery(collection: string): ItemQuery {
  return stored.get(collection) ?? DEFAULT_QUERY;
}

export function storeQuery(collection: string, query: ItemQuery): void {
  stored.set(collection, query);
}
