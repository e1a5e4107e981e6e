import type { Document } from 'mongodb';
import { ValidationFailedError, type FieldError } from '../../common/errors';
import { orderPathProblem, valueAtPath } from '../query/json-guard';

/**
 * Grouped counts and sums (`GET /data/{c}/aggregate`): one `$group` over one field, with one
 * accumulator from a fixed list, after the request's `$match`. The client names fields and an
 * operation; the pipeline is always this one.
 */

export const AGGREGATE_OPS = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateOp = (typeof AGGREGATE_OPS)[number];

export interface AggregateRequest {
  groupBy: string;
  op: AggregateOp;
  /** The field summed, averaged or compared; null for count. */
  field: string | null;
}

export interface AggregateGroup {
  key: unknown;
  value: unknown;
}

export interface AggregateResult {
  groups: AggregateGroup[];
  /** More groups exist than the answer holds (AGGREGATE_MAX_GROUPS). */
  truncated: boolean;
}

function isAggregateOp(op: string): op is AggregateOp {
  return (AGGREGATE_OPS as readonly string[]).includes(op);
}

/** The aggregate's own parameters; every problem is reported at once. */
export function parseAggregate(params: Record<string, string>): AggregateRequest {
  const errors: FieldError[] = [];
  const { groupBy, op = 'count', field } = params;
  if (groupBy === undefined) errors.push({ field: 'groupBy', message: 'is required' });
  else {
    const problem = orderPathProblem(groupBy);
    if (problem) errors.push({ field: 'groupBy', message: `field path ${problem}` });
  }
  if (!isAggregateOp(op))
    errors.push({ field: 'op', message: `must be one of ${AGGREGATE_OPS.join(', ')}` });
  else if (op === 'count' && field !== undefined)
    errors.push({ field: 'field', message: 'goes with sum, avg, min and max, not count' });
  else if (op !== 'count') {
    if (field === undefined) errors.push({ field: 'field', message: `is required for op=${op}` });
    else {
      const problem = orderPathProblem(field);
      if (problem) errors.push({ field: 'field', message: `field path ${problem}` });
    }
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return { groupBy: groupBy as string, op: op as AggregateOp, field: field ?? null };
}

/** `$match` → `$group` → `$sort` by key → `$limit` one past the cap, to know whether it cut. */
export function aggregatePipeline(
  request: AggregateRequest,
  match: Document,
  maxGroups: number,
): Document[] {
  const accumulator =
    request.op === 'count' ? { $sum: 1 } : { [`$${request.op}`]: `$${request.field}` };
  return [
    { $match: match },
    { $group: { _id: `$${request.groupBy}`, value: accumulator } },
    { $sort: { _id: 1 } },
    { $limit: maxGroups + 1 },
  ];
}

/** Dates (timestamps) as RFC 3339 strings, like items; everything else as stored. */
function jsonValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  // A group of items without the field has no key: MongoDB answers null, FerretDB leaves it out.
  return value === undefined ? null : value;
}

export function toAggregateResult(rows: Document[], maxGroups: number): AggregateResult {
  return {
    groups: rows
      .slice(0, maxGroups)
      .map((row) => ({ key: jsonValue(row._id), value: jsonValue(row.value) })),
    truncated: rows.length > maxGroups,
  };
}

/**
 * The groups of avg, min and max computed from the matching items themselves, read in group-key
 * order, for a database without those accumulators (FerretDB has only $sum and $count). It stops
 * after one group past the cap, and keeps one running total per group, like the database would.
 */
export async function groupInProcess(
  docs: AsyncIterable<Document>,
  request: AggregateRequest,
  maxGroups: number,
): Promise<Document[]> {
  const rows: { _id: unknown; sum: number; n: number; best: number | null }[] = [];
  for await (const doc of docs) {
    const key = valueAtPath(doc, request.groupBy) ?? null;
    let row = rows.at(-1);
    if (!row || !sameKey(row._id, key)) {
      if (rows.length > maxGroups) break;
      row = { _id: key, sum: 0, n: 0, best: null };
      rows.push(row);
    }
    const value = valueAtPath(doc, request.field ?? '');
    if (typeof value !== 'number') continue;
    row.sum += value;
    row.n += 1;
    const better =
      request.op === 'min' ? value < (row.best ?? Infinity) : value > (row.best ?? -Infinity);
    if (row.best === null || better) row.best = value;
  }
  return rows.map((row) => ({
    _id: row._id,
    value: request.op === 'avg' ? (row.n === 0 ? null : row.sum / row.n) : row.best,
  }));
}

function sameKey(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
