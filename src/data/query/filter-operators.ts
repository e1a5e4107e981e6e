import { ValidationFailedError, type FieldError } from '../../common/errors';
import type { ListQuery } from '../../common/http/list-query';
import { parseRfc3339 } from '../../common/pagination/rfc3339';
import { fieldPathProblem } from './json-guard';
import { type JsonScalar } from '../../common/json';

/**
 * Filter operators: the query-string form (`filter[f][op]=v`, `f[op]=v`, `f=v`,
 * `existsFilter[f]`) and the body form (`{"f": v}`, `{"f": {"op": v}}`), both read into
 * conditions. An operator is a name from OPERATORS, never a MongoDB operator: conditions are
 * turned into MongoDB filters only by data-query.ts.
 */

export type FilterValue = JsonScalar | Date;
export type RangeOperator = 'gt' | 'gte' | 'lt' | 'lte';

export type Condition =
  /** The field equals one of the values (eq, in, plain `f=v`; query strings: "5" matches "5" and 5). */
  | { kind: 'eq'; path: string; anyOf: FilterValue[] }
  /** The field equals none of the values (ne, nin); a missing field matches. */
  | { kind: 'ne'; path: string; noneOf: FilterValue[] }
  /** The field compares with a value of the same type (numbers, strings or dates). */
  | { kind: 'range'; path: string; op: RangeOperator; value: string | number | Date }
  | { kind: 'exists'; path: string; exists: boolean }
  /** The field is a string that starts with the prefix (taken literally). */
  | { kind: 'prefix'; path: string; prefix: string };

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
const OPERATOR_SET: ReadonlySet<string> = new Set(OPERATORS);

export interface FilterLimits {
  /** Conditions in one filter: every operator of every field, and every existence test. */
  maxConditions: number;
  /** Values in one `in` or `nin` list. */
  maxInValues: number;
}

export function filterLimits(limits: {
  filterMaxConditions: number;
  filterMaxInValues: number;
}): FilterLimits {
  return { maxConditions: limits.filterMaxConditions, maxInValues: limits.filterMaxInValues };
}

export const MAX_PREFIX_LENGTH = 1024;
/** The prefix rule as a JSON Schema pattern (lengths are stated beside it). */
export const PREFIX_SCHEMA_PATTERN = '^[^\\u0000]+$';
export const TIMESTAMP_FIELDS: ReadonlySet<string> = new Set(['_createdAt', '_updatedAt']);
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** The number a query-string value spells (`-1.5`, `100`; not `007` or `0x10`), or null. */
export function spelledNumber(raw: string): number | null {
  return NUMBER.test(raw) && Number.isFinite(Number(raw)) ? Number(raw) : null;
}

export function isOperator(name: string): name is Operator {
  return OPERATOR_SET.has(name);
}

/** A query-string value matches itself as a string, or the number, boolean or null it spells. */
export function coerceQueryValue(raw: string): JsonScalar[] {
  const values: JsonScalar[] = [raw];
  const number = spelledNumber(raw);
  if (number !== null) values.push(number);
  else if (raw === 'true') values.push(true);
  else if (raw === 'false') values.push(false);
  else if (raw === 'null') values.push(null);
  return values;
}

/** Collects the problems of one filter, each naming its parameter, and throws them together. */
export class ConditionReader {
  readonly conditions: Condition[] = [];
  readonly errors: FieldError[] = [];

  constructor(private readonly limits: FilterLimits) {}

  fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  path(path: string, field: string): boolean {
    const problem = fieldPathProblem(path);
    if (problem) this.fail(field, `field path ${problem}`);
    return problem === null;
  }

  add(condition: Condition): void {
    this.conditions.push(condition);
  }

  /** A timestamp operand: an RFC 3339 string, or a problem. */
  timestamp(text: unknown, field: string): { date: Date; inexact: boolean } | null {
    const parsed = typeof text === 'string' ? parseRfc3339(text) : null;
    if (!parsed) {
      this.fail(field, 'must be an RFC 3339 timestamp, e.g. 2026-01-02T03:04:05.678Z');
      return null;
    }
    return { date: parsed.date, inexact: parsed.subMillisecond };
  }

  /**
   * A range on a timestamp: stored dates have millisecond precision, so a bound with digits
   * below the millisecond becomes the equivalent bound on the millisecond below it.
   */
  range(path: string, op: RangeOperator, value: string | number, field: string): void {
    if (!TIMESTAMP_FIELDS.has(path)) {
      this.add({ kind: 'range', path, op, value });
      return;
    }
    const stamp = this.timestamp(value, field);
    if (!stamp) return;
    const exactOp: RangeOperator = !stamp.inexact ? op : op === 'gt' || op === 'gte' ? 'gt' : 'lte';
    this.add({ kind: 'range', path, op: exactOp, value: stamp.date });
  }

  /** Values compared for equality: timestamps as dates; a sub-millisecond one equals nothing. */
  equalValues(path: string, values: JsonScalar[], field: string): FilterValue[] | null {
    if (!TIMESTAMP_FIELDS.has(path)) return values;
    const dates: Date[] = [];
    for (const value of values) {
      const stamp = this.timestamp(value, field);
      if (!stamp) return null;
      if (!stamp.inexact) dates.push(stamp.date);
    }
    return dates;
  }

  prefix(path: string, value: unknown, field: string): void {
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_PREFIX_LENGTH) {
      this.fail(field, `must be a string of 1 to ${MAX_PREFIX_LENGTH} characters`);
      return;
    }
    // MongoDB refuses a pattern holding a NUL character.
    if (value.includes('\u0000')) {
      this.fail(field, 'must not contain a NUL character');
      return;
    }
    this.add({ kind: 'prefix', path, prefix: value });
  }

  listSize(count: number, field: string): boolean {
    if (count === 0) this.fail(field, 'must list at least one value');
    else if (count > this.limits.maxInValues)
      this.fail(field, `must list at most ${this.limits.maxInValues} values`);
    return count > 0 && count <= this.limits.maxInValues;
  }

  finish(field: string): Condition[] {
    if (this.conditions.length > this.limits.maxConditions)
      this.fail(
        field,
        `has ${this.conditions.length} conditions; at most ${this.limits.maxConditions} are allowed`,
      );
    if (this.errors.length > 0) throw new ValidationFailedError(this.errors);
    return this.conditions;
  }
}

export function unknownOperator(op: string): string {
  const hint = op.startsWith('$') && isOperator(op.slice(1)) ? ` (write '${op.slice(1)}')` : '';
  return `unknown operator '${op}'${hint}; allowed: ${OPERATORS.join(', ')}`;
}

/** A range operand in a query string: a value that spells a number is a number, else a string. */
function queryRangeValue(raw: string): string | number {
  return spelledNumber(raw) ?? raw;
}

/**
 * Conditions of a list or count query string: `f=v`/`filter[f]=v` (equality),
 * `filter[f][op]=v`/`f[op]=v` (operators) and `existsFilter[f]=true|false`. Every problem is
 * reported at once, each naming its parameter.
 */
export function queryConditions(query: ListQuery, limits: FilterLimits): Condition[] {
  const reader = new ConditionReader(limits);
  for (const [path, raw] of Object.entries(query.filters)) {
    const field = path;
    if (!reader.path(path, field)) continue;
    const anyOf = reader.equalValues(path, coerceQueryValue(raw), field);
    if (anyOf) reader.add({ kind: 'eq', path, anyOf });
  }
  for (const { path, op, values, param } of query.operators) {
    if (!reader.path(path, param)) continue;
    if (!isOperator(op)) {
      reader.fail(param, unknownOperator(op));
      continue;
    }
    if (op !== 'in' && op !== 'nin' && values.length > 1) {
      reader.fail(param, 'must be given once (only in and nin take repeated values)');
      continue;
    }
    const raw = values[0] ?? '';
    if (op === 'in' || op === 'nin') {
      // One parameter is a comma-separated list; repeated parameters are one value each.
      const listed = values.length === 1 ? (raw === '' ? [] : raw.split(',')) : values;
      if (!reader.listSize(listed.length, param)) continue;
      const anyOf = reader.equalValues(path, listed.flatMap(coerceQueryValue), param);
      if (!anyOf) continue;
      reader.add(op === 'in' ? { kind: 'eq', path, anyOf } : { kind: 'ne', path, noneOf: anyOf });
    } else if (op === 'eq' || op === 'ne') {
      const anyOf = reader.equalValues(path, coerceQueryValue(raw), param);
      if (!anyOf) continue;
      reader.add(op === 'eq' ? { kind: 'eq', path, anyOf } : { kind: 'ne', path, noneOf: anyOf });
    } else if (op === 'exists') {
      if (raw === 'true' || raw === 'false')
        reader.add({ kind: 'exists', path, exists: raw === 'true' });
      else reader.fail(param, "must be 'true' or 'false'");
    } else if (op === 'prefix') {
      reader.prefix(path, raw, param);
    } else {
      reader.range(path, op, queryRangeValue(raw), param);
    }
  }
  for (const [path, exists] of Object.entries(query.exists)) {
    if (reader.path(path, `existsFilter[${path}]`)) reader.add({ kind: 'exists', path, exists });
  }
  return reader.finish('filter');
}
