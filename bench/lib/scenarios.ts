// The load scenarios, one declarative entry each. To add one, add an entry.
//
//   id, title, route   names in the report
//   phase              when it runs:
//                        'other'         once, on the service only
//                        'projects'      after the projects are seeded
//                        'items-growth'  at every item count (10,000, 100,000 [, 1,000,000])
//                        'items-main'    at the main item count (100,000)
//                        'items-write'   last, at the largest item count (they add items)
//   baseline           also run against bench/baseline.ts, and report the ratio
//   request(ctx)       { method, paths, body?, headers?, expectStatus?, verify? } built from the
//                      run's context:
//                        paths   cycled through, one per request; `%SEQ%` in a path, body or
//                                header value becomes a per-request counter (0 for the probe)
//                        headers sent with every request of this scenario (besides the key)
//                        expectStatus  the one status that counts as success (default: any 2xx)
//                        verify  (probe response) => problem string or undefined; the probe is
//                                paths[0] with %SEQ% = 0, sent once before the load
//
// The feature comparisons (lib/comparisons.ts) build their requests the same way.
import { isArray, prop, type ApiResponse } from './api';
import { PAYLOAD, type SeededProjects } from './seed';

/** `service` runs every scenario; the two metrics instances only the metrics comparison. */
export type TargetName =
  | 'service'
  | 'service-metrics-on'
  | 'service-metrics-off'
  | 'service-events-off'
  | 'service-usage-on'
  | 'service-usage-off'
  | 'service-token'
  | 'service-one-cluster'
  | 'service-three-clusters'
  | 'service-transfer'
  | 'service-files'
  | 'service-move'
  | 'baseline'
  | 'baseline-uncached'
  | 'baseline-nest';

/** What every scenario may use. */
export interface BaseContext {
  target: TargetName;
  runTag: string;
  subject: string;
  pageLimit: number;
  pick: (count: number, n: number) => number[];
}

export interface ProjectsContext extends BaseContext {
  projects: SeededProjects;
}

export interface ItemsContext extends BaseContext {
  items: { name: string; size: number; id: (i: number) => string };
}

export interface ScenarioRequest {
  method: string;
  paths: string[];
  body?: string;
  headers?: Record<string, string>;
  /** API keys taken in turn with `paths` (same length); unset: the bench user's key. */
  keys?: string[];
  /** Sent without a key: the request authenticates otherwise (an access token in `headers`). */
  keyless?: boolean;
  expectStatus?: number;
  /** The page number a keyset scenario asks for, for the report. */
  page?: number;
  verify?: (res: ApiResponse) => string | undefined;
}

interface ScenarioInfo {
  id: string;
  title: string;
  route: string;
  baseline?: boolean;
}

/** A scenario's phase decides what data exists when it runs, and so what its context holds. */
export type Scenario = ScenarioInfo &
  (
    | { phase: 'other'; request(ctx: BaseContext): ScenarioRequest }
    | { phase: 'projects'; request(ctx: ProjectsContext): ScenarioRequest }
    | {
        phase: 'items-growth' | 'items-main' | 'items-write';
        request(ctx: ItemsContext): ScenarioRequest;
      }
  );

export type Phase = Scenario['phase'];

/** A scenario on the items collection (its request needs the items). */
export type ItemScenario = Extract<
  Scenario,
  { phase: 'items-growth' | 'items-main' | 'items-write' }
>;

export function isItemScenario(scenario: Scenario): scenario is ItemScenario {
  return scenario.phase.startsWith('items');
}

export const SAMPLE_PATHS = 1000;
const enc = encodeURIComponent;

/** A JSON value in a problem message. */
const show = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');

function firstIdIs(field: string, expected: string): (res: ApiResponse) => string | undefined {
  return (res) => {
    if (!isArray(res.body)) return `expected a JSON array, got ${res.status}`;
    const first = prop(res.body[0], field);
    return first !== expected
      ? `expected the page to start at ${expected}, it starts at ${show(first)}`
      : undefined;
  };
}

function pageOf(
  size: number,
  expected: (res: ApiResponse) => string | undefined,
): (res: ApiResponse) => string | undefined {
  return (res) =>
    isArray(res.body) && res.body.length === size
      ? expected(res)
      : `expected ${size} entries, got ${isArray(res.body) ? res.body.length : res.status}`;
}

/** Page number used for "page 1,000": the last full page when there are fewer rows (smoke). */
function deepPage(rows: number, limit: number): number {
  return Math.max(2, Math.min(1000, Math.floor(rows / limit)));
}

/** The `count` of a count response, or NaN (which compares false) when there is none. */
function countOf(res: ApiResponse): number {
  const count = prop(res.body, 'count');
  return typeof count === 'number' ? count : NaN;
}

/** GET by `_id` of the items `indexes` in turn; the probe checks it got the first one. */
export function itemsById(items: ItemsContext['items'], indexes: number[]): ScenarioRequest {
  const ids = indexes.map(items.id);
  return {
    method: 'GET',
    paths: ids.map((id) => `/data/${items.name}/_id/${id}`),
    verify: (res) =>
      prop(res.body, '_id') === ids[0] ? undefined : `expected item ${show(ids[0])}`,
  };
}

/**
 * POST of a new item whose `sku` is `<skuPrefix>-<n>`, n the request's counter: the prefix must
 * be unique per server and run, or the unique index on sku would turn repeats into 409s.
 */
export function itemPost(items: ItemsContext['items'], skuPrefix: string): ScenarioRequest {
  const sku = `${skuPrefix}-%SEQ%`;
  const item = { sku, group: 'posted', n: '%SEQ%', status: 'open', payload: PAYLOAD };
  return {
    method: 'POST',
    paths: [`/data/${items.name}`],
    body: JSON.stringify({ item }).replace('"%SEQ%"', '%SEQ%'),
    verify: (res) =>
      prop(res.body, 'sku') === sku.replace('%SEQ%', '0') &&
      typeof prop(res.body, '_id') === 'string'
        ? undefined
        : 'expected the stored item',
  };
}

/** Items per request of the bulk scenario. */
export const BULK_ITEMS = 20;

/**
 * POST /data/{c}/bulk of BULK_ITEMS new items whose `sku` is `<skuPrefix>-<n>-<i>`, n the
 * request's counter (unique per server and run, like itemPost's).
 */
export function itemBulk(items: ItemsContext['items'], skuPrefix: string): ScenarioRequest {
  const list = Array.from({ length: BULK_ITEMS }, (_, i) => ({
    sku: `${skuPrefix}-%SEQ%-${i}`,
    group: 'bulk',
    n: i,
    status: 'open',
    payload: PAYLOAD,
  }));
  return {
    method: 'POST',
    paths: [`/data/${items.name}/bulk`],
    body: JSON.stringify({ items: list }),
    verify: (res) =>
      prop(res.body, 'created') === BULK_ITEMS ? undefined : `expected ${BULK_ITEMS} created`,
  };
}

export const scenarios: Scenario[] = [
  {
    id: 'profile',
    title: 'GET /profile',
    route: 'GET /profile',
    phase: 'other',
    request: ({ subject }) => ({
      method: 'GET',
      paths: ['/profile'],
      verify: (res) =>
        prop(res.body, 'subject') === subject ? undefined : "not the caller's profile",
    }),
  },
  {
    id: 'api-keys',
    title: 'GET /api-keys',
    route: 'GET /api-keys',
    phase: 'other',
    request: () => ({
      method: 'GET',
      paths: ['/api-keys'],
      verify: (res) =>
        isArray(res.body) && res.body.length > 0 ? undefined : 'expected the key list',
    }),
  },
  {
    id: 'projects-page-1',
    title: 'Projects keyset page 1',
    route: 'GET /project?limit=L',
    phase: 'projects',
    request: ({ projects, pageLimit }) => ({
      method: 'GET',
      paths: [`/project?limit=${pageLimit}`],
      verify: pageOf(pageLimit, firstIdIs('id', projects.id(projects.count - 1))),
    }),
  },
  {
    id: 'projects-page-deep',
    title: 'Projects keyset page 1,000',
    route: 'GET /project?limit=L&after[createdAt]=…&after[id]=…',
    phase: 'projects',
    request: ({ projects, pageLimit }) => {
      // Default order is createdAt descending, and seeded project i has the i-th createdAt, so
      // sort position p holds project count-1-p. The cursor is the last entry of the page before.
      const page = deepPage(projects.count, pageLimit);
      const cursor = projects.count - 1 - ((page - 1) * pageLimit - 1);
      return {
        method: 'GET',
        page,
        paths: [
          `/project?limit=${pageLimit}&after[createdAt]=${enc(projects.createdAt(cursor))}&after[id]=${projects.id(cursor)}`,
        ],
        verify: pageOf(pageLimit, firstIdIs('id', projects.id(cursor - 1))),
      };
    },
  },
  {
    id: 'item-by-id',
    title: 'GET item by _id',
    route: 'GET /data/{c}/_id/{id}',
    phase: 'items-growth',
    baseline: true,
    request: ({ items, pick }) => itemsById(items, pick(SAMPLE_PATHS, items.size)),
  },
  {
    id: 'item-list-filter',
    title: 'List 50 items with a filter',
    route: 'GET /data/{c}?group=g…&limit=50',
    phase: 'items-growth',
    baseline: true,
    request: ({ items }) => ({
      method: 'GET',
      paths: Array.from({ length: 10 }, (_, g) => `/data/${items.name}?group=g${g}&limit=50`),
      verify: (res) =>
        isArray(res.body) &&
        res.body.length >= Math.min(50, Math.floor(items.size / 10)) &&
        res.body.length <= 50 &&
        res.body.every((item) => prop(item, 'group') === 'g0')
          ? undefined
          : `expected up to 50 items of group g0, got ${isArray(res.body) ? res.body.length : res.status}`,
    }),
  },
  {
    id: 'item-count',
    title: 'Count items, no filter',
    route: 'GET /data/{c}/count',
    phase: 'items-growth',
    baseline: true,
    request: ({ items }) => ({
      method: 'GET',
      paths: [`/data/${items.name}/count`],
      verify: (res) =>
        countOf(res) >= items.size ? undefined : `expected a count ≥ ${items.size}`,
    }),
  },
  {
    id: 'item-by-field',
    title: 'GET item by an indexed field',
    route: 'GET /data/{c}/sku/{sku}',
    phase: 'items-main',
    baseline: true,
    request: ({ items, pick }) => {
      const skus = pick(SAMPLE_PATHS, items.size).map((i) => `sku-${i}`);
      return {
        method: 'GET',
        paths: skus.map((sku) => `/data/${items.name}/sku/${sku}`),
        verify: (res) =>
          prop(res.body, 'sku') === skus[0]
            ? undefined
            : `expected the item with sku ${show(skus[0])}`,
      };
    },
  },
  {
    id: 'item-count-filter',
    title: 'Count items with a filter',
    route: 'GET /data/{c}/count?group=g…',
    phase: 'items-main',
    baseline: true,
    request: ({ items }) => ({
      method: 'GET',
      paths: Array.from({ length: 10 }, (_, g) => `/data/${items.name}/count?group=g${g}`),
      verify: (res) =>
        countOf(res) >= Math.floor(items.size / 10)
          ? undefined
          : `expected a count ≥ ${Math.floor(items.size / 10)}`,
    }),
  },
  {
    id: 'item-list-range',
    title: 'List items in a numeric range',
    route: 'GET /data/{c}?n[gte]=…&n[lt]=…&limit=50',
    phase: 'items-main',
    baseline: true,
    request: ({ items, pick }) => {
      const starts = pick(SAMPLE_PATHS, Math.max(1, items.size - 50));
      const first = starts[0] ?? 0;
      return {
        method: 'GET',
        paths: starts.map((n) => `/data/${items.name}?n[gte]=${n}&n[lt]=${n + 50}&limit=50`),
        verify: (res) =>
          isArray(res.body) &&
          res.body.length === 50 &&
          res.body.every((item) => {
            const n = prop(item, 'n');
            return typeof n === 'number' && n >= first && n < first + 50;
          })
            ? undefined
            : `expected the 50 items with ${first} ≤ n < ${first + 50}`,
      };
    },
  },
  {
    id: 'item-aggregate',
    title: 'Sum a field per group',
    route: 'GET /data/{c}/aggregate?groupBy=group&op=sum&field=n',
    phase: 'items-main',
    baseline: true,
    request: ({ items }) => ({
      method: 'GET',
      paths: [`/data/${items.name}/aggregate?groupBy=group&op=sum&field=n`],
      verify: (res) => {
        const groups = prop(res.body, 'groups');
        return isArray(groups) && groups.length === 10 && prop(groups[0], 'key') === 'g0'
          ? undefined
          : `expected 10 groups g0…g9, got ${show(groups)}`;
      },
    }),
  },
  {
    id: 'items-page-1',
    title: 'Items keyset page 1',
    route: 'GET /data/{c}?sort=_id&sortOrder=asc&limit=L',
    phase: 'items-main',
    request: ({ items, pageLimit }) => ({
      method: 'GET',
      paths: [`/data/${items.name}?sort=_id&sortOrder=asc&limit=${pageLimit}`],
      verify: pageOf(pageLimit, firstIdIs('_id', items.id(0))),
    }),
  },
  {
    id: 'items-page-deep',
    title: 'Items keyset page 1,000',
    route: 'GET /data/{c}?sort=_id&sortOrder=asc&limit=L&after[_id]=…',
    phase: 'items-main',
    request: ({ items, pageLimit }) => {
      // Ascending _id (the default order is descending, which would put the API-created sample
      // item first): seeded ids sort in index order, so position p is item p.
      const page = deepPage(items.size, pageLimit);
      const cursor = (page - 1) * pageLimit - 1;
      return {
        method: 'GET',
        page,
        paths: [
          `/data/${items.name}?sort=_id&sortOrder=asc&limit=${pageLimit}&after[_id]=${items.id(cursor)}`,
        ],
        verify: pageOf(pageLimit, firstIdIs('_id', items.id(cursor + 1))),
      };
    },
  },
  {
    id: 'item-put',
    title: 'PUT an item (by _id)',
    route: 'PUT /data/{c}/_id/{id}',
    phase: 'items-write',
    baseline: true,
    request: ({ items, pick }) => {
      const ids = pick(SAMPLE_PATHS, items.size).map(items.id);
      return {
        method: 'PUT',
        paths: ids.map((id) => `/data/${items.name}/_id/${id}`),
        body: '{"values":{"qty":%SEQ%,"status":"updated"}}',
        verify: (res) =>
          prop(res.body, '_id') === ids[0] && prop(res.body, 'qty') === 0
            ? undefined
            : 'expected the updated item',
      };
    },
  },
  {
    id: 'item-post',
    title: 'POST an item',
    route: 'POST /data/{c}',
    phase: 'items-write',
    baseline: true,
    request: ({ items, target, runTag }) => itemPost(items, `post-${target}-${runTag}`),
  },
  {
    id: 'item-bulk',
    title: `POST ${BULK_ITEMS} items in one bulk request`,
    route: 'POST /data/{c}/bulk',
    phase: 'items-write',
    baseline: true,
    request: ({ items, target, runTag }) => itemBulk(items, `bulk-${target}-${runTag}`),
  },
];
