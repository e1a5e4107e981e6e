import { ValidationFailedError, type FieldError } from '../errors';
import { prototypeKeyProblem } from './query-keys';

export type SortOrder = 'asc' | 'desc';

/** A list request's query string, split into its parts; values are always strings. */
export interface ListQuery {
  sort?: string;
  sortOrder: SortOrder;
  /** Whether sortOrder was given (a multi-field sort names its directions itself). */
  sortOrderGiven: boolean;
  limit: number;
  /** before[field]=value */
  before: Record<string, string>;
  /** after[field]=value */
  after: Record<string, string>;
  /** k=v and filter[k]=v */
  filters: Record<string, string>;
  /** existsFilter[k]=true|false */
  exists: Record<string, boolean>;
  /** filter[k][op]=v and k[op]=v, when the route takes operators; in/nin may repeat. */
  operators: OperatorParam[];
  /** Other named parameters the route accepts (e.g. authField). */
  params: Record<string, string>;
}

export interface OperatorParam {
  path: string;
  op: string;
  /** One value, or the values of a repeated parameter. */
  values: string[];
  /** The parameter as written, for errors. */
  param: string;
}

export interface ListQueryOptions {
  limitDefault: number;
  limitMax: number;
  /** Named parameters besides sort, sortOrder and limit (e.g. ['authField']). */
  params?: readonly string[];
  /** Whether existsFilter[k] is accepted. */
  allowExists?: boolean;
  /**
   * Whether `filter[k][op]=v` and `k[op]=v` are read as operator conditions (the operator name
   * is checked by the route); parameters ending in one of `repeatable`'s operators may repeat.
   */
  operators?: { repeatable: readonly string[] };
}

const BRACKET_KEY = /^(before|after|filter|existsFilter)\[([^[\]]+)\]$/;
const OPERATOR_KEY = /^(?:filter\[([^[\]]+)\]|([^[\]]+))\[([^[\]]+)\]$/;
const RESERVED = new Set(['sort', 'sortOrder', 'limit']);

/** A record without a prototype: any key, `__proto__` included, is an ordinary own property. */
function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * Parses a flat query object (Express 5's "simple" parser: values are strings or string arrays,
 * never objects). Bracket keys are recognised only in the four forms above and, where the route
 * takes operators, as `filter[k][op]`/`k[op]`, whose operator names the route checks against
 * its own list: `name[$ne]=x` never becomes a MongoDB operator, it is a 400. Keys with a `__proto__`, `constructor` or `prototype`
 * segment are refused here as well as in front of the routes: assigning `__proto__` to a plain
 * object is a no-op, which would drop the filter without a word. The result's records have no
 * prototype, so nothing that reads them can reach Object.prototype. Every problem is reported
 * at once.
 */
export function parseListQuery(raw: Record<string, unknown>, options: ListQueryOptions): ListQuery {
  const errors: FieldError[] = [];
  const result: ListQuery = {
    sortOrder: 'desc',
    sortOrderGiven: false,
    limit: options.limitDefault,
    before: record(),
    after: record(),
    filters: record(),
    exists: record(),
    operators: [],
    params: record(),
  };
  const named = new Set(options.params ?? []);

  for (const [key, value] of Object.entries(raw)) {
    const prototypeProblem = prototypeKeyProblem(key);
    if (prototypeProblem) {
      errors.push(prototypeProblem);
      continue;
    }
    const operator = options.operators && !BRACKET_KEY.test(key) ? OPERATOR_KEY.exec(key) : null;
    if (operator) {
      const [, filterPath, barePath, op] = operator as unknown as [string, string, string, string];
      const values = typeof value === 'string' ? [value] : value;
      const repeatable = options.operators?.repeatable.includes(op) ?? false;
      if (!Array.isArray(values) || !values.every((v) => typeof v === 'string'))
        errors.push({ field: key, message: 'must be a plain value' });
      else if (values.length > 1 && !repeatable)
        errors.push({ field: key, message: 'must be given once' });
      else result.operators.push({ path: filterPath ?? barePath, op, values, param: key });
      continue;
    }
    if (typeof value !== 'string') {
      errors.push({ field: key, message: 'must be given once, as a plain value' });
      continue;
    }
    if (key === 'sort') {
      result.sort = value;
    } else if (key === 'sortOrder') {
      result.sortOrderGiven = true;
      if (value === 'asc' || value === 'desc') result.sortOrder = value;
      else errors.push({ field: key, message: "must be 'asc' or 'desc'" });
    } else if (key === 'limit') {
      const limit = /^\d{1,6}$/.test(value) ? Number(value) : NaN;
      if (Number.isInteger(limit) && limit >= 1 && limit <= options.limitMax) result.limit = limit;
      else errors.push({ field: key, message: `must be an integer from 1 to ${options.limitMax}` });
    } else if (named.has(key)) {
      result.params[key] = value;
    } else {
      const match = BRACKET_KEY.exec(key);
      if (match) {
        const [, group, field] = match as unknown as [string, string, string];
        if (group === 'before') result.before[field] = value;
        else if (group === 'after') result.after[field] = value;
        else if (group === 'filter') result.filters[field] = value;
        else if (options.allowExists) {
          if (value === 'true' || value === 'false') result.exists[field] = value === 'true';
          else errors.push({ field: key, message: "must be 'true' or 'false'" });
        } else errors.push({ field: key, message: 'existsFilter is not supported here' });
      } else if (key.includes('[') || key.includes(']') || RESERVED.has(key)) {
        errors.push({ field: key, message: 'is not a recognised parameter' });
      } else {
        result.filters[key] = value;
      }
    }
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return result;
}
