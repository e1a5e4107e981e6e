import sift from 'sift';
import { parseListQuery } from '../../common/http/list-query';
import type { LiveFilter } from '../../events';
import { toMongoFilter } from './data-query';
import { queryConditions, TIMESTAMP_FIELDS, type FilterLimits } from './filter-operators';
import { parseProjection, projectItem } from './projection';

/**
 * A live query's `filter[…]` and `fields` (GET /events with a collection): the list's filter
 * language in its `filter[k]=v` / `filter[k][op]=v` forms, under the same limits, turned into
 * the very MongoDB filter a list runs (toMongoFilter) and evaluated in memory by sift, which
 * follows MongoDB's matching (type bracketing of comparisons included). Items reach it as
 * events carry them (JSON): the timestamps are turned back into the dates the database compares.
 */
export function compileLiveFilter(
  params: Record<string, unknown>,
  limits: FilterLimits,
): LiveFilter {
  const query = parseListQuery(params, {
    limitDefault: 1,
    limitMax: 1,
    params: ['fields'],
    operators: { repeatable: ['in', 'nin'] },
  });
  const filter = toMongoFilter({ scope: null, conditions: queryConditions(query, limits) });
  const test = sift<Record<string, unknown>>(filter);
  const projection = parseProjection(query.params.fields);
  const named = [
    ...Object.keys(query.filters).map((path) => ({ field: `filter[${path}]`, path })),
    ...query.operators.map(({ path, param }) => ({ field: param, path })),
    ...(projection?.paths ?? []).map((path) => ({ field: 'fields', path })),
  ];
  return {
    named,
    matches: (item) => test(asStored(item)),
    project: (item) => projectItem(item, projection),
  };
}

/** The item (as JSON, as events carry it) with its timestamps as dates, as stored. */
export function asStored(item: Record<string, unknown>): Record<string, unknown> {
  const stored = { ...item };
  for (const field of TIMESTAMP_FIELDS) {
    const value = stored[field];
    if (typeof value === 'string') stored[field] = new Date(value);
  }
  return stored;
}
