import type { FieldError } from '../common/errors';
import { ValidationFailedError } from '../common/errors';
import type { ListQuery, SortOrder } from '../common/http/list-query';
import { isObjectIdHex } from '../common/mongo/object-id';
import { PROJECT_SORT_FIELDS, type ProjectSortField } from './project.schema';

/** Equality filters of GET /project: `k=v` or `filter[k]=v`. */
export const PROJECT_FILTER_KEYS = ['name', 'tag'] as const;
export type ProjectFilterKey = (typeof PROJECT_FILTER_KEYS)[number];

/** A keyset position: the sort field's value, and optionally the id that breaks ties. */
export interface ProjectCursor {
  value: Date | string;
  /** ObjectId hex; with it the cursor is the pair (value, id). */
  id?: string;
}

/** A validated GET /project request. */
export interface ProjectListSpec {
  sort: ProjectSortField;
  sortOrder: SortOrder;
  limit: number;
  /** Entries strictly after this position in the sort order. */
  after?: ProjectCursor;
  /** Entries strictly before this position in the sort order. */
  before?: ProjectCursor;
  filters: Partial<Record<ProjectFilterKey, string>>;
}

const TIMESTAMP_FIELDS: ReadonlySet<string> = new Set<ProjectSortField>(['createdAt', 'updatedAt']);
const CURSOR_FIELDS = [...PROJECT_SORT_FIELDS, 'id'] as const;

const ALLOWED_PARAMETERS =
  'sort, sortOrder, limit, before[<field>], after[<field>], name, tag, filter[name], filter[tag]';

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+ -])(\d{2}):(\d{2}))$/;

/** An RFC 3339 timestamp, split into the millisecond instant and whether digits below a millisecond were set. */
export interface ParsedTimestamp {
  /** The instant, truncated to the millisecond (MongoDB's date precision). */
  date: Date;
  /** True when the value had non-zero digits below the millisecond. */
  subMillisecond: boolean;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Parses an RFC 3339 date-time (`2026-01-02T03:04:05.678Z`, `...+02:00`); null when it is not
 * one. Stricter than Date.parse, which also accepts `2026-02-30` or `Jan 2 2026`. Leap seconds
 * (`:60`) are rejected: JavaScript dates cannot represent them. A space in place of the offset's
 * `+` is read as `+`: it is what an unencoded `+` in a query string decodes to.
 */
export function parseRfc3339(value: string): ParsedTimestamp | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7] ?? '';
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (m[8] === undefined) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  const date = new Date(utc.getTime() - offsetMinutes * 60_000);
  if (Number.isNaN(date.getTime())) return null;
  return { date, subMillisecond: /[1-9]/.test(fraction.slice(3)) };
}

function isSortField(value: string): value is ProjectSortField {
  return (PROJECT_SORT_FIELDS as readonly string[]).includes(value);
}

function isFilterKey(value: string): value is ProjectFilterKey {
  return (PROJECT_FILTER_KEYS as readonly string[]).includes(value);
}

/**
 * Reads one side (after or before) of the cursor. `greater` says whether this side keeps values
 * greater than the cursor (after + asc, before + desc) or smaller ones.
 */
function readCursor(
  side: 'after' | 'before',
  raw: Record<string, string>,
  sort: ProjectSortField | undefined,
  greater: boolean,
  errors: FieldError[],
): ProjectCursor | undefined {
  let value: Date | string | undefined;
  let id: string | undefined;
  let subMillisecond = false;
  for (const [field, text] of Object.entries(raw)) {
    const key = `${side}[${field}]`;
    if (field === 'id') {
      if (isObjectIdHex(text)) id = text.toLowerCase();
      else errors.push({ field: key, message: 'must be a project id (24 hexadecimal digits)' });
    } else if (!isSortField(field)) {
      errors.push({
        field: key,
        message: `is not a cursor field; allowed: ${CURSOR_FIELDS.join(', ')}`,
      });
    } else if (sort !== undefined && field !== sort) {
      errors.push({
        field: key,
        message: `must name the sort field (sort=${sort}); add sort=${field} to page by ${field}`,
      });
    } else if (TIMESTAMP_FIELDS.has(field)) {
      const parsed = parseRfc3339(text);
      if (parsed) {
        value = parsed.date;
        subMillisecond = parsed.subMillisecond;
      } else {
        errors.push({
          field: key,
          message: 'must be an RFC 3339 timestamp, e.g. 2026-01-02T03:04:05.678Z',
        });
      }
    } else {
      value = text;
    }
  }
  if (id !== undefined && value === undefined) {
    if (sort !== undefined && !errors.some((e) => e.field.startsWith(`${side}[`))) {
      errors.push({
        field: `${side}[id]`,
        message: `needs ${side}[${sort}] too: the cursor is the pair (${sort}, id) of the last item seen`,
      });
    }
    return undefined;
  }
  if (value === undefined) return undefined;
  if (value instanceof Date && subMillisecond) {
    // Stored dates have millisecond precision, so no stored value equals this instant (the id
    // cannot break a tie that cannot happen) and "> v" is "> floor(v)", "< v" is "< floor(v) + 1 ms".
    return { value: greater ? value : new Date(value.getTime() + 1) };
  }
  return id === undefined ? { value } : { value, id };
}

/**
 * Validates the parsed query string of GET /project against the project rules and lists every
 * problem at once (sort field, cursor fields and values, filter keys).
 */
export function toProjectListSpec(query: ListQuery): ProjectListSpec {
  const errors: FieldError[] = [];
  let sort: ProjectSortField | undefined = 'createdAt';
  if (query.sort !== undefined) {
    if (isSortField(query.sort)) sort = query.sort;
    else {
      errors.push({
        field: 'sort',
        message: `must be one of ${PROJECT_SORT_FIELDS.join(', ')}`,
      });
      sort = undefined;
    }
  }
  const ascending = query.sortOrder === 'asc';
  const after = readCursor('after', query.after, sort, ascending, errors);
  const before = readCursor('before', query.before, sort, !ascending, errors);

  const filters: ProjectListSpec['filters'] = {};
  for (const [key, value] of Object.entries(query.filters)) {
    if (isFilterKey(key)) filters[key] = value;
    else
      errors.push({
        field: key,
        message: `is not a filter of projects; filters: ${PROJECT_FILTER_KEYS.join(', ')} (or filter[name], filter[tag]); parameters: ${ALLOWED_PARAMETERS}`,
      });
  }
  if (errors.length > 0 || sort === undefined) {
    throw new ValidationFailedError(
      errors,
      `The query string is not valid (${errors.map((e) => e.field).join(', ')}). Allowed parameters: ${ALLOWED_PARAMETERS}.`,
    );
  }
  return {
    sort,
    sortOrder: query.sortOrder,
    limit: query.limit,
    ...(after ? { after } : {}),
    ...(before ? { before } : {}),
    filters,
  };
}

/**
 * True when the request pages backwards: a before[] cursor alone asks for the entries right
 * before it, so the scan runs against the sort order and the next link moves the before[] cursor.
 */
export function walksBackwards(spec: ProjectListSpec): boolean {
  return spec.before !== undefined && spec.after === undefined;
}

/** The values of an item that a follow-up cursor is built from. */
export interface CursorSource {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The `Link` header value for the next page: the same path and query parameters, with the
 * cursor replaced by the (sort value, id) of `edge`, the page's last item. When the request walks
 * backwards the link is `rel="prev"` and `edge` is the page's first item.
 */
export function pageLink(
  path: string,
  rawQuery: Record<string, unknown>,
  spec: ProjectListSpec,
  edge: CursorSource,
): string {
  const backwards = walksBackwards(spec);
  const side = backwards ? 'before' : 'after';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(rawQuery)) {
    if (key.startsWith(`${side}[`) || typeof value !== 'string') continue;
    params.append(key, value);
  }
  params.append(`${side}[${spec.sort}]`, edge[spec.sort]);
  params.append(`${side}[id]`, edge.id);
  return `<${path}?${params.toString()}>; rel="${backwards ? 'prev' : 'next'}"`;
}
