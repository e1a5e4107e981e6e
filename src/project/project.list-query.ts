import type { FieldError } from '../common/errors';
import { ValidationFailedError } from '../common/errors';
import type { ListQuery, SortOrder } from '../common/http/list-query';
import { isObjectIdHex } from '../common/mongo/object-id';
import {
  keysetLink,
  parseTimestampCursor,
  readKeysetSide,
  walksBackwards,
  type KeysetCursor,
  type KeysetRules,
} from '../common/pagination/keyset';
import { PROJECT_SORT_FIELDS, type ProjectSortField } from './project.schema';

/** Equality filters of GET /project: `k=v` or `filter[k]=v`. */
export const PROJECT_FILTER_KEYS = ['name', 'tag'] as const;
export type ProjectFilterKey = (typeof PROJECT_FILTER_KEYS)[number];

/** A keyset position: the sort field's value, and optionally the id (ObjectId hex) that breaks ties. */
export type ProjectCursor = KeysetCursor<Date | string>;

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

const ALLOWED_PARAMETERS =
  'sort, sortOrder, limit, before[<field>], after[<field>], name, tag, filter[name], filter[tag]';

function isSortField(value: string): value is ProjectSortField {
  return (PROJECT_SORT_FIELDS as readonly string[]).includes(value);
}

function isFilterKey(value: string): value is ProjectFilterKey {
  return (PROJECT_FILTER_KEYS as readonly string[]).includes(value);
}

/** How GET /project reads cursor values: RFC 3339 timestamps, names as text, ObjectId ids. */
function cursorRules(sort: ProjectSortField | undefined): KeysetRules<Date | string> {
  return {
    sortField: sort,
    idField: 'id',
    sortable: PROJECT_SORT_FIELDS,
    parseValue: (field, text, greater) =>
      TIMESTAMP_FIELDS.has(field) ? parseTimestampCursor(text, greater) : { value: text },
    parseId: (text) =>
      isObjectIdHex(text)
        ? { value: text.toLowerCase() }
        : { error: 'must be a project id (24 hexadecimal digits)' },
  };
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
  const rules = cursorRules(sort);
  const after = readKeysetSide('after', query.after, rules, ascending, errors);
  const before = readKeysetSide('before', query.before, rules, ascending, errors);

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

/** The values of an item that a follow-up cursor is built from. */
export interface CursorSource {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The `Link` header value for the following page: the cursor becomes the (sort value, id) of
 * `edge`, the page's last item, or its first when the request walks backwards (rel="prev").
 */
export function pageLink(
  path: string,
  rawQuery: Record<string, unknown>,
  spec: ProjectListSpec,
  edge: CursorSource,
): string {
  const side = walksBackwards(spec) ? 'before' : 'after';
  return keysetLink(path, rawQuery, side, { [spec.sort]: edge[spec.sort], id: edge.id });
}
