// The feature comparisons: what metrics, Idempotency-Key and conditional GETs cost. Each one is a
// request run in variants (feature on and off, service and baseline) that lib/compare.ts loads
// alternately, round after round, on a small collection of its own. They are judged on the
// server's CPU time per response: on a database that scans (FerretDB) throughput is mostly the
// database's, while the CPU a server process spends per request is its own.
//
//   variants   id, label, the server it runs on, and its request (as a scenario builds one)
//   prepare    asks the service once whether the feature is there; `missing` says why not (the
//              comparison is then reported as not available), `etag` feeds conditional requests
//   checks     PASS/FAIL on the totals of the variants
import { prepareAccessBench, type AccessBench } from './access-rules';
import {
  prepareSearchExpandBench,
  SEARCH_EXPAND_SIZES,
  SEARCH_QUERIES,
  type SearchExpandBench,
  type SearchExpandSizes,
} from './search-expand';
import { isArray, prop, type ApiResponse } from './api';
import type { LoadTotals } from './load-runner';
import {
  itemPost,
  itemsById,
  isItemScenario,
  SAMPLE_PATHS,
  scenarios,
  type ItemsContext,
  type ScenarioRequest,
  type TargetName,
} from './scenarios';
import {
  IDLE_COMMANDS_PER_S_MAX,
  IDLE_CPU_MS_PER_S_MAX,
  IDLE_AFTER_LOAD_FROM_MS,
  IDLE_SETTLE_MS,
  IDLE_TIMES,
  IDLE_WATCH_MS,
  idleBackground,
  type IdleBackground,
  type IdleTimes,
} from './idle';
import type { Check, ComparisonRun } from './types';

/** Metrics may add less than this share of service CPU per request (issue: under 5 %). */
export const METRICS_CPU_MAX = 0.05;
/** Usage metering may add less than this share of service CPU per GET and per POST (issue: 5 %). */
export const USAGE_CPU_MAX = 0.05;
/** The interval the metering instance flushes at: USAGE_FLUSH_MS's default (src/config). */
const USAGE_FLUSH_MS = 60_000;
/** A key's limits (scopes, collections, addresses) may add less than this share (issue: 3 %). */
export const KEY_LIMITS_CPU_MAX = 0.03;
/** A read rule (a filter) may add less than this share of service CPU to a sub key's read (10 %). */
export const ACCESS_RULES_CPU_MAX = 0.1;
/**
 * A search page against a plain page of the same collection: the query's words are a few
 * microseconds; what remains is the database's (it scans on FerretDB), not the service's CPU.
 */
export const SEARCH_CPU_MAX = 1.25;
/**
 * A page whose 50 items each carry an expanded item renders twice the JSON and merges one more
 * answer: at most twice the page without it.
 */
export const EXPAND_CPU_MAX = 2.0;
/** An access token may cost less than this share over a key, its JWKS cached (issue: 10 %). */
export const TOKEN_AUTH_CPU_MAX = 0.1;
/** The budget of an Idempotency-Key on a create: its record costs less than half a POST. */
export const IDEMPOTENCY_CPU_MAX = 0.5;
/**
 * The change feed's budget on a create: its intent (insert, delete) and its events (a read of the
 * newest id and an insert each) may at most double the service's CPU per POST.
 */
export const EVENTS_CPU_MAX = 1.0;
/** A 304 costs no more than a 200, within the measurement's noise. */
export const NOT_MODIFIED_CPU_MAX = 1.05;
/**
 * The service's CPU and database commands per request at most these, next to the baseline's,
 * for the two requests judged: GET by _id and POST (the goals of the write path's performance
 * work; docs/benchmarks.md, "Reading BENCHMARKS.md").
 */
export const SERVICE_GOALS: Record<string, { cpu: number; floor: number; commands: number }> = {
  'item-by-id': { cpu: 1.3, floor: 1.15, commands: 1 },
  'item-post': { cpu: 2.0, floor: 1.5, commands: 2 },
};
/**
 * What the commands per request may exceed a goal by: the instance's own background work (the
 * feed's and webhooks' polls, sweeps) sends a few commands a second whatever the load, and they
 * are counted with the requests'.
 */
export const BACKGROUND_COMMANDS = 0.05;

export interface ComparisonContext extends ItemsContext {
  /** The current ETag of the conditional GET's item, found by `prepare`. */
  etag?: string;
  /** A key limited to a scope, the items' collection and the loopback addresses (`prepare`). */
  limitedKey?: string;
  /** The bench user's access token for the `service-token` instance (lib/token-auth.ts). */
  token?: { accessToken: string; linkProblem?: string; jwksFetches: () => number };
  /** A sub key and its two collections, with and without a read rule (lib/access-rules.ts). */
  access?: AccessBench;
  /** The searched collection and the orders with their customers (lib/search-expand.ts). */
  searchExpand?: SearchExpandBench;
  /** What the search-and-expand comparison sets up; unset: SEARCH_EXPAND_SIZES. */
  searchExpandSizes?: SearchExpandSizes;
  /** How long the `idle` comparison rests and watches; unset: IDLE_TIMES. */
  idleTimes?: IdleTimes;
}

export interface Variant {
  id: string;
  label: string;
  target: TargetName;
  request(ctx: ComparisonContext): ScenarioRequest;
}

/** A call to one of the running servers, with the bench user's key. */
export type Ask = (
  target: TargetName,
  method: string,
  path: string,
  options?: { body?: unknown; headers?: Record<string, string>; keyless?: boolean },
) => Promise<ApiResponse>;

export interface Prepared {
  missing?: string;
  /** What the instance cost with no request (the `idle` comparison, lib/idle.ts). */
  idle?: IdleBackground;
  etag?: string;
  limitedKey?: string;
  access?: AccessBench;
  searchExpand?: SearchExpandBench;
  /** Lines for the report: what the set-up measured. */
  notes?: string[];
}

export interface Comparison {
  id: string;
  title: string;
  route: string;
  variants: Variant[];
  prepare(ask: Ask, ctx: ComparisonContext): Promise<Prepared>;
  /** Runs this many times the mode's rounds (a tight limit needs more of them). */
  roundsFactor?: number;
  /**
   * `totals` of a variant id; undefined when that variant was not measured. `run`: what the
   * comparison recorded besides its variants (its idle figures); undefined when it did not run.
   */
  checks(totals: (variant: string) => LoadTotals | undefined, run?: ComparisonRun): Check[];
}

export const pct = (ratio: number): string =>
  `${ratio >= 1 ? '+' : '−'}${Math.abs((ratio - 1) * 100).toFixed(1)} %`;
const cpu = (ms: number): string => `${ms.toFixed(3)} ms`;
const rate = (n: number): string =>
  n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);

/** The q-quantile of `values` (linear between neighbours); undefined when there are none. */
export function quantile(values: number[], q: number): number | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const at = (sorted.length - 1) * q;
  const low = sorted[Math.floor(at)] ?? 0;
  const high = sorted[Math.ceil(at)] ?? low;
  return low + (high - low) * (at - Math.floor(at));
}

/**
 * The CPU per request with the feature over without, below a limit. The ratio judged is the
 * median of the rounds' ratios: the two sides of a round ran back to back, under nearly the same
 * load from the rest of the machine, and the median is not moved by a round that met a burst. The
 * throughput difference is reported, not judged, and the baseline's figures when there is one.
 */
export function cpuRatioCheck(
  name: string,
  limit: number,
  withFeature: LoadTotals | undefined,
  without: LoadTotals | undefined,
  baseline?: LoadTotals,
  {
    atMost = false,
    also,
  }: {
    atMost?: boolean;
    /**
     * Other servers' figures to report, with the ratio of `withFeature` to theirs; `ofBaseline`:
     * with the ratio of theirs to `without` instead (how far from it they are themselves).
     */
    also?: { label: string; totals?: LoadTotals; ofBaseline?: boolean }[];
  } = {},
): Check {
  const ratios = roundRatios(withFeature, without);
  const ratio = quantile(ratios, 0.5);
  if (!withFeature?.cpuMs || !without?.cpuMs || ratio === undefined)
    return { name, status: 'n/a', detail: 'not measured' };
  const throughput = withFeature.requestsPerSecond / (without.requestsPerSecond || NaN);
  // The middle half of the rounds' ratios shows how far one run can be trusted.
  const spread =
    ratios.length > 1
      ? `median of ${ratios.length} rounds, middle half ${pct(quantile(ratios, 0.25) ?? ratio)} … ${pct(quantile(ratios, 0.75) ?? ratio)}`
      : '1 round';
  return {
    name,
    status: (atMost ? ratio <= limit : ratio < limit) ? 'PASS' : 'FAIL',
    detail:
      `CPU ${cpu(withFeature.cpuMs)} vs ${cpu(without.cpuMs)} per request; ${pct(ratio)} (${spread}; limit ${pct(limit)}); ` +
      `${rate(withFeature.requestsPerSecond)} vs ${rate(without.requestsPerSecond)} req/s (${pct(throughput)})` +
      (baseline?.cpuMs
        ? `; baseline ${cpu(baseline.cpuMs)}, ${rate(baseline.requestsPerSecond)} req/s`
        : '') +
      (also ?? [])
        .map(({ label, totals, ofBaseline = false }) => {
          const pair = ofBaseline ? roundRatios(totals, without) : roundRatios(withFeature, totals);
          const alsoRatio = quantile(pair, 0.5);
          const of = ofBaseline ? " the baseline's" : '';
          return totals?.cpuMs && alsoRatio !== undefined
            ? `; ${label} ${cpu(totals.cpuMs)} per request, ${alsoRatio.toFixed(2)} ×${of} (median of rounds)`
            : '';
        })
        .join(''),
  };
}

/** CPU per request of `a` over `b`, round by round (the two ran back to back in each round). */
function roundRatios(a: LoadTotals | undefined, b: LoadTotals | undefined): number[] {
  return (a?.cpuMsPerRound ?? []).flatMap((x, i) => {
    const y = b?.cpuMsPerRound[i];
    return x && y ? [x / y] : [];
  });
}

/** Database commands per request in steady state, at most `expected` (plus background work). */
function commandsCheck(name: string, expected: number, totals: LoadTotals | undefined): Check {
  if (totals?.commands === undefined) return { name, status: 'n/a', detail: 'not measured' };
  return {
    name,
    status: totals.commands <= expected + BACKGROUND_COMMANDS ? 'PASS' : 'FAIL',
    detail: `${totals.commands.toFixed(2)} commands per request (at most ${Number.isInteger(expected) ? expected : expected.toFixed(2)}, plus ${BACKGROUND_COMMANDS} for the instance's background work)`,
  };
}

/**
 * Service vs baseline on every item scenario the baseline serves, on the comparisons' small
 * collection: what a request costs the service process in CPU and database commands, next to
 * the least a server can do (and to the baseline as it was before its key cache, which read the
 * key on every request). These figures do not depend on how fast the database is; GET by _id and
 * POST are judged against SERVICE_GOALS.
 */
export const costComparisons: Comparison[] = scenarios
  .filter(isItemScenario)
  .filter((scenario) => scenario.baseline)
  .map((scenario) => {
    const goal = SERVICE_GOALS[scenario.id];
    const request = (target: TargetName) => (ctx: ComparisonContext) =>
      scenario.request({ ...ctx, target });
    return {
      id: `cost-${scenario.id}`,
      title: `Service cost: ${scenario.title}`,
      route: scenario.route,
      // The judged ones are judged on at least 20 rounds in a default run (10 rounds).
      ...(goal ? { roundsFactor: 2 } : {}),
      variants: [
        { id: 'service', label: 'service', target: 'service', request: request('service') },
        { id: 'baseline', label: 'baseline', target: 'baseline', request: request('baseline') },
        {
          id: 'baseline-uncached',
          label: 'old baseline (key read per request)',
          target: 'baseline-uncached',
          // The baseline's requests, with created items of its own (POST's unique skus).
          request: (ctx) =>
            scenario.request({ ...ctx, target: 'baseline', runTag: `${ctx.runTag}-old` }),
        },
        // The judged routes also on the framework floor: the baseline on NestJS and Express.
        ...(goal
          ? [
              {
                id: 'baseline-nest',
                label: 'framework floor (the baseline on NestJS)',
                target: 'baseline-nest' as const,
                request: (ctx: ComparisonContext) =>
                  scenario.request({ ...ctx, target: 'baseline', runTag: `${ctx.runTag}-nest` }),
              },
            ]
          : []),
      ],
      prepare: () => Promise.resolve({}),
      checks: (totals) =>
        goal
          ? [
              cpuRatioCheck(
                `${scenario.title}: service CPU per request ≤ ${goal.cpu} × the baseline's`,
                goal.cpu,
                totals('service'),
                totals('baseline'),
                undefined,
                {
                  atMost: true,
                  also: [
                    { label: 'old baseline', totals: totals('baseline-uncached') },
                    { label: 'framework floor', totals: totals('baseline-nest'), ofBaseline: true },
                  ],
                },
              ),
              // What the service adds to the stack it is built on: the same rounds, against the
              // framework floor (the baseline's routes on NestJS and Express).
              cpuRatioCheck(
                `${scenario.title}: service CPU per request ≤ ${goal.floor} × the framework floor's`,
                goal.floor,
                totals('service'),
                totals('baseline-nest'),
                undefined,
                { atMost: true },
              ),
              commandsCheck(
                `${scenario.title}: ≤ ${goal.commands} database command${goal.commands === 1 ? '' : 's'} per request`,
                goal.commands,
                totals('service'),
              ),
            ]
          : [],
    } satisfies Comparison;
  });

/** The same items for every variant: the comparison is between servers, not between ids. */
const byId = ({ items, pick }: ComparisonContext): ScenarioRequest =>
  itemsById(items, pick(SAMPLE_PATHS, items.size));

/** A sub key's GET by _id in one of the access comparison's collections. */
const accessGet =
  (which: 'plain' | 'ruled') =>
  ({ access, pick }: ComparisonContext): ScenarioRequest => {
    const collection = access?.[which] ?? { name: 'missing', ids: ['missing'] };
    const ids = pick(SAMPLE_PATHS, collection.ids.length).map((i) => collection.ids[i] ?? '');
    return {
      method: 'GET',
      paths: ids.map((id) => `/data/${collection.name}/_id/${id}`),
      headers: { 'x-api-key': access?.key ?? '' },
      keyless: true,
      verify: (res) => (prop(res.body, '_id') === ids[0] ? undefined : `expected item ${ids[0]}`),
    };
  };

/** A sub key's list of one group (20 of the 200 items) in one of the access comparison's collections. */
const accessList =
  (which: 'plain' | 'ruled') =>
  ({ access }: ComparisonContext): ScenarioRequest => {
    const name = access?.[which].name ?? 'missing';
    return {
      method: 'GET',
      paths: Array.from({ length: 10 }, (_, g) => `/data/${name}?group=g${g}&limit=50`),
      headers: { 'x-api-key': access?.key ?? '' },
      keyless: true,
      verify: (res) =>
        isArray(res.body) && res.body.length === 20
          ? undefined
          : `expected the 20 items of group g0, got ${isArray(res.body) ? res.body.length : res.status}`,
    };
  };

/** A page of 50 of the searched collection: a search (`q`), or the plain list. */
const searchPage =
  (search: boolean) =>
  ({ searchExpand }: ComparisonContext): ScenarioRequest => {
    const name = searchExpand?.searched ?? 'missing';
    return {
      method: 'GET',
      paths: search
        ? SEARCH_QUERIES.map((q) => `/data/${name}?q=${encodeURIComponent(q)}&limit=50`)
        : [`/data/${name}?limit=50`],
      verify: (res) =>
        isArray(res.body) && res.body.length > 0 && res.body.length <= 50
          ? undefined
          : `expected a page of 1 to 50 items, got ${isArray(res.body) ? res.body.length : res.status}`,
    };
  };

/** The first 50 orders, with their customers expanded or not. */
const ordersPage =
  (expand: boolean) =>
  ({ searchExpand }: ComparisonContext): ScenarioRequest => {
    const orders = searchExpand?.orders ?? 'missing';
    const customers = searchExpand?.customers ?? 'missing';
    return {
      method: 'GET',
      paths: [`/data/${orders}?limit=50${expand ? `&expand=customer:${customers}` : ''}`],
      verify: (res) => {
        if (!isArray(res.body) || res.body.length !== 50)
          return `expected 50 orders, got ${isArray(res.body) ? res.body.length : res.status}`;
        const customer = prop(res.body[0], 'customer');
        const expanded = typeof prop(customer, 'name') === 'string';
        return expanded === expand
          ? undefined
          : `the first order's customer is ${expanded ? '' : 'not '}expanded`;
      },
    };
  };

/** The item the conditional GETs read, in the middle of the collection. */
const conditionalIndex = (items: ComparisonContext['items']): number => Math.floor(items.size / 2);

export const comparisons: Comparison[] = [
  ...costComparisons,
  {
    id: 'metrics',
    title: 'Metrics: GET item by _id with metrics on vs off',
    route: 'GET /data/{c}/_id/{id}',
    roundsFactor: 2,
    variants: [
      { id: 'on', label: 'metrics on', target: 'service-metrics-on', request: byId },
      { id: 'off', label: 'metrics off', target: 'service-metrics-off', request: byId },
    ],
    async prepare(ask) {
      const on = await ask('service-metrics-on', 'GET', '/metrics');
      if (on.status !== 200 || !on.text.includes('# TYPE'))
        return { missing: `GET /metrics answered ${on.status} with metrics on` };
      const off = await ask('service-metrics-off', 'GET', '/metrics');
      if (off.status === 200) return { missing: 'METRICS_ENABLED=false left /metrics on' };
      return {};
    },
    checks: (totals) => [
      cpuRatioCheck(
        `Metrics add < ${METRICS_CPU_MAX * 100} % service CPU per GET by _id`,
        1 + METRICS_CPU_MAX,
        totals('on'),
        totals('off'),
      ),
    ],
  },
  {
    id: 'usage',
    title: 'Usage metering: GET item by _id and POST an item with metering on vs off',
    route: 'GET /data/{c}/_id/{id}, POST /data/{c}',
    roundsFactor: 2,
    variants: [
      { id: 'get-on', label: 'GET, metering on', target: 'service-usage-on', request: byId },
      { id: 'get-off', label: 'GET, metering off', target: 'service-usage-off', request: byId },
      {
        id: 'post-on',
        label: 'POST, metering on',
        target: 'service-usage-on',
        request: ({ items, runTag }) => itemPost(items, `usage-on-${runTag}`),
      },
      {
        id: 'post-off',
        label: 'POST, metering off',
        target: 'service-usage-off',
        request: ({ items, runTag }) => itemPost(items, `usage-off-${runTag}`),
      },
    ],
    async prepare(ask) {
      const on = await ask('service-usage-on', 'GET', '/me/usage');
      if (on.status !== 200) return { missing: `GET /me/usage answered ${on.status}` };
      return {
        notes: [
          `Metering counts in memory and flushes once per USAGE_FLUSH_MS (${USAGE_FLUSH_MS / 1000} s by default): one insert per instance and interval whatever the load, shown per request in the checks below and not part of any request's commands.`,
        ],
      };
    },
    checks: (totals) =>
      (['get', 'post'] as const).flatMap((method) => {
        const on = totals(`${method}-on`);
        const off = totals(`${method}-off`);
        const name = method === 'get' ? 'GET by _id' : 'POST';
        const perSecond = on?.requestsPerSecond ?? 0;
        return [
          cpuRatioCheck(
            `Metering adds < ${USAGE_CPU_MAX * 100} % service CPU per ${name}`,
            1 + USAGE_CPU_MAX,
            on,
            off,
          ),
          commandsCheck(`Metering adds no database command per ${name}`, off?.commands ?? 0, on),
          {
            name: `Metering's flushes, amortised over ${name}s`,
            status: 'n/a',
            detail:
              perSecond > 0
                ? `one insert per ${USAGE_FLUSH_MS / 1000} s per instance: ${(1000 / USAGE_FLUSH_MS / perSecond).toFixed(5)} commands per request at ${perSecond.toFixed(1)} req/s`
                : 'not measured',
          },
        ];
      }),
  },
  {
    id: 'idempotency',
    title: 'Idempotency-Key: POST an item with a unique key vs without',
    route: 'POST /data/{c}',
    variants: [
      {
        id: 'keyed',
        label: 'with Idempotency-Key',
        target: 'service',
        request: ({ items, runTag }) => ({
          ...itemPost(items, `idem-keyed-${runTag}`),
          headers: { 'Idempotency-Key': `bench-${runTag}-%SEQ%` },
        }),
      },
      {
        id: 'plain',
        label: 'without',
        target: 'service',
        request: ({ items, runTag }) => itemPost(items, `idem-plain-${runTag}`),
      },
      {
        id: 'baseline',
        label: 'baseline, without',
        target: 'baseline',
        request: ({ items, runTag }) => itemPost(items, `idem-baseline-${runTag}`),
      },
    ],
    async prepare(ask, { items, runTag }) {
      // The same key and body twice: the second answer must be the stored first one.
      const key = `bench-${runTag}-probe`;
      const body = { item: { sku: `idem-probe-${runTag}`, group: 'posted', n: 0 } };
      const send = (): Promise<ApiResponse> =>
        ask('service', 'POST', `/data/${items.name}`, {
          body,
          headers: { 'Idempotency-Key': key },
        });
      const first = await send();
      if (first.status < 200 || first.status > 299)
        return { missing: `POST with an Idempotency-Key answered ${first.status}` };
      const repeat = await send();
      if (repeat.headers.get('idempotent-replayed') !== 'true')
        return {
          missing: `a repeated Idempotency-Key answered ${repeat.status} without Idempotent-Replayed: true`,
        };
      if (prop(repeat.body, '_id') !== prop(first.body, '_id'))
        return { missing: 'the replayed answer names another item than the first' };
      return {};
    },
    checks: (totals) => [
      cpuRatioCheck(
        `Idempotency-Key adds < ${IDEMPOTENCY_CPU_MAX * 100} % service CPU per POST`,
        1 + IDEMPOTENCY_CPU_MAX,
        totals('keyed'),
        totals('plain'),
        totals('baseline'),
      ),
    ],
  },
  {
    id: 'events',
    title: 'Change feed: POST an item with the feed on vs off',
    route: 'POST /data/{c}',
    variants: [
      {
        id: 'on',
        label: 'feed on',
        target: 'service',
        request: ({ items, runTag }) => itemPost(items, `feed-on-${runTag}`),
      },
      {
        id: 'off',
        label: 'feed off',
        target: 'service-events-off',
        request: ({ items, runTag }) => itemPost(items, `feed-off-${runTag}`),
      },
    ],
    async prepare(ask) {
      const on = await ask('service', 'GET', '/events?limit=1');
      if (on.status !== 200) return { missing: `GET /events answered ${on.status}` };
      return {};
    },
    checks: (totals) => [
      cpuRatioCheck(
        `The change feed adds < ${EVENTS_CPU_MAX * 100} % service CPU per POST`,
        1 + EVENTS_CPU_MAX,
        totals('on'),
        totals('off'),
      ),
    ],
  },
  {
    id: 'key-limits',
    title:
      'Key limits: GET item by _id with a key limited to data:read, its collection and loopback vs a key without limits',
    route: 'GET /data/{c}/_id/{id}',
    roundsFactor: 2,
    variants: [
      {
        id: 'limited',
        label: 'limited key',
        target: 'service',
        request: (ctx) => ({ ...byId(ctx), headers: { 'x-api-key': ctx.limitedKey ?? '' } }),
      },
      { id: 'full', label: 'key without limits', target: 'service', request: byId },
    ],
    async prepare(ask, { items }) {
      const made = await ask('service', 'POST', '/api-keys', {
        body: {
          name: 'bench-limited',
          scopes: ['data:read'],
          collections: { [items.name]: 'read' },
          allowedIps: ['127.0.0.1/32', '::1/128'],
        },
      });
      const limitedKey = prop(made.body, 'apiKey');
      if (made.status !== 200 || typeof limitedKey !== 'string')
        return { missing: `POST /api-keys with limits answered ${made.status}` };
      const headers = { 'x-api-key': limitedKey };
      const read = await ask('service', 'GET', `/data/${items.name}/_id/${items.id(0)}`, {
        headers,
      });
      if (read.status !== 200) return { missing: `the limited key's GET answered ${read.status}` };
      // The limits are in force: the same key may not write.
      const write = await ask('service', 'POST', `/data/${items.name}`, {
        body: { item: { sku: 'limited-probe' } },
        headers,
      });
      if (write.status !== 403)
        return { missing: `the limited key's POST answered ${write.status}, not 403` };
      return { limitedKey };
    },
    checks: (totals) => [
      cpuRatioCheck(
        `Key limits add < ${KEY_LIMITS_CPU_MAX * 100} % service CPU per GET by _id`,
        1 + KEY_LIMITS_CPU_MAX,
        totals('limited'),
        totals('full'),
      ),
      commandsCheck(
        'Key limits add no database command to a GET by _id',
        totals('full')?.commands ?? 0,
        totals('limited'),
      ),
    ],
  },
  {
    id: 'access-rules',
    title:
      'Access rules: a sub key reads a collection whose read rule is a filter vs one with the defaults (its own items)',
    route: 'GET /data/{c}/_id/{id} and GET /data/{c}?group=g…&limit=50',
    roundsFactor: 2,
    variants: [
      {
        id: 'ruled-get',
        label: 'GET, filter rule',
        target: 'service',
        request: accessGet('ruled'),
      },
      { id: 'plain-get', label: 'GET, defaults', target: 'service', request: accessGet('plain') },
      {
        id: 'ruled-list',
        label: 'list, filter rule',
        target: 'service',
        request: accessList('ruled'),
      },
      {
        id: 'plain-list',
        label: 'list, defaults',
        target: 'service',
        request: accessList('plain'),
      },
    ],
    async prepare(ask, { runTag }) {
      const access = await prepareAccessBench(ask, runTag);
      return typeof access === 'string' ? { missing: access } : { access };
    },
    checks: (totals) => [
      cpuRatioCheck(
        `A filter read rule adds < ${ACCESS_RULES_CPU_MAX * 100} % service CPU to a sub key's GET by _id`,
        1 + ACCESS_RULES_CPU_MAX,
        totals('ruled-get'),
        totals('plain-get'),
      ),
      cpuRatioCheck(
        `A filter read rule adds < ${ACCESS_RULES_CPU_MAX * 100} % service CPU to a sub key's list`,
        1 + ACCESS_RULES_CPU_MAX,
        totals('ruled-list'),
        totals('plain-list'),
      ),
      commandsCheck(
        'A read rule adds no database command to a GET by _id',
        totals('plain-get')?.commands ?? 0,
        totals('ruled-get'),
      ),
      commandsCheck(
        'A read rule adds no database command to a list',
        totals('plain-list')?.commands ?? 0,
        totals('ruled-list'),
      ),
    ],
  },
  {
    id: 'search-expand',
    title:
      'Search and expand: a search and a list of 50 with one expansion, beside plain lists of 50',
    route: 'GET /data/{c}?q=…&limit=50, GET /data/{c}?limit=50&expand=customer:customers',
    variants: [
      {
        id: 'search',
        label: 'search (q), page of 50',
        target: 'service',
        request: searchPage(true),
      },
      {
        id: 'plain-list',
        label: 'plain list of 50, same collection',
        target: 'service',
        request: searchPage(false),
      },
      {
        id: 'expanded',
        label: '50 orders, customer expanded',
        target: 'service',
        request: ordersPage(true),
      },
      { id: 'unexpanded', label: '50 orders', target: 'service', request: ordersPage(false) },
    ],
    async prepare(ask, { runTag, searchExpandSizes = SEARCH_EXPAND_SIZES }) {
      const bench = await prepareSearchExpandBench(ask, runTag, searchExpandSizes);
      if (typeof bench === 'string') return { missing: bench };
      return {
        searchExpand: bench,
        notes: [
          '',
          `The ${bench.sizes.searched.toLocaleString('en-US')} searched items were written under the configuration (each create stores its words). The build of the word lists of ${bench.sizes.built.toLocaleString('en-US')} items written before their configuration (PUT /data/{c}/search to state \`ready\`, the registry cache delay included) took ${bench.buildSeconds.toFixed(1)} s.`,
          ...(bench.idle
            ? [
                `With no request at all, after the set-up, the instance spent ${bench.idle.cpuMsPerSecond.toFixed(1)} ms of CPU and sent ${bench.idle.commandsPerSecond.toFixed(2)} database commands per second (watched for ${bench.idle.seconds.toFixed(0)} s): its polls. The figures per request above include that background for as long as each request took; at R requests per second it adds ${bench.idle.cpuMsPerSecond.toFixed(1)}/R ms and ${bench.idle.commandsPerSecond.toFixed(2)}/R commands to each.`,
              ]
            : []),
        ],
      };
    },
    checks: (totals) => [
      commandsCheck(
        'A search sends the database the one find a plain list sends',
        totals('plain-list')?.commands ?? 0,
        totals('search'),
      ),
      commandsCheck(
        'An expansion adds one database command per page (one $in), not one per item',
        (totals('unexpanded')?.commands ?? 0) + 1,
        totals('expanded'),
      ),
      cpuRatioCheck(
        `A search costs at most ${SEARCH_CPU_MAX}× the service CPU of a plain list of the same collection`,
        SEARCH_CPU_MAX,
        totals('search'),
        totals('plain-list'),
        undefined,
        { atMost: true },
      ),
      cpuRatioCheck(
        `A page of 50 with one expansion costs at most ${EXPAND_CPU_MAX}× the service CPU of the page without it`,
        EXPAND_CPU_MAX,
        totals('expanded'),
        totals('unexpanded'),
        undefined,
        { atMost: true },
      ),
    ],
  },
  {
    id: 'token-auth',
    title:
      'Identity tokens: GET item by _id with an access token vs with a key, on one instance, the JWKS cached',
    route: 'GET /data/{c}/_id/{id}',
    roundsFactor: 2,
    variants: [
      {
        id: 'token',
        label: 'access token',
        target: 'service-token',
        request: (ctx) => ({
          ...byId(ctx),
          keyless: true,
          headers: { authorization: `Bearer ${ctx.token?.accessToken ?? ''}` },
        }),
      },
      { id: 'key', label: 'key', target: 'service-token', request: byId },
    ],
    async prepare(ask, { items, subject, token }) {
      if (!token) return { missing: 'the service-token instance is not running' };
      if (token.linkProblem) return { missing: token.linkProblem };
      const headers = { authorization: `Bearer ${token.accessToken}` };
      const me = await ask('service-token', 'GET', '/me', { headers, keyless: true });
      const credential = prop(me.body, 'authenticatedWith');
      if (me.status !== 200 || prop(credential, 'kind') !== 'token')
        return { missing: `GET /me with the access token answered ${me.status}` };
      if (prop(me.body, 'subject') !== subject)
        return { missing: 'the access token does not act as the bench user' };
      const read = await ask('service-token', 'GET', `/data/${items.name}/_id/${items.id(0)}`, {
        headers,
        keyless: true,
      });
      if (read.status !== 200) return { missing: `the token's GET answered ${read.status}` };
      // The scope is in force (data:read only), with no database command of its own.
      const write = await ask('service-token', 'POST', `/data/${items.name}`, {
        body: { item: { sku: 'token-probe' } },
        headers,
        keyless: true,
      });
      if (write.status !== 403)
        return { missing: `the token's POST answered ${write.status}, not 403` };
      if (token.jwksFetches() !== 1)
        return { missing: `the JWKS was fetched ${token.jwksFetches()} times, not once` };
      return {};
    },
    checks: (totals) => [
      cpuRatioCheck(
        `An access token costs < ${TOKEN_AUTH_CPU_MAX * 100} % service CPU over a key per GET by _id`,
        1 + TOKEN_AUTH_CPU_MAX,
        totals('token'),
        totals('key'),
      ),
      commandsCheck(
        'An access token adds no database command to a GET by _id',
        totals('key')?.commands ?? 0,
        totals('token'),
      ),
    ],
  },
  {
    id: 'conditional-get',
    title: 'Conditional GET: If-None-Match with the current ETag (304) vs plain GET (200)',
    route: 'GET /data/{c}/_id/{id}',
    variants: [
      {
        id: 'not-modified',
        label: 'If-None-Match → 304',
        target: 'service',
        request: ({ items, etag = '' }) => ({
          ...itemsById(items, [conditionalIndex(items)]),
          headers: { 'If-None-Match': etag },
          expectStatus: 304,
          verify: (res: ApiResponse) =>
            res.text === '' ? undefined : 'expected a 304 without a body',
        }),
      },
      {
        id: 'plain',
        label: 'plain GET → 200',
        target: 'service',
        request: ({ items }) => itemsById(items, [conditionalIndex(items)]),
      },
      {
        id: 'baseline',
        label: 'baseline, plain GET → 200',
        target: 'baseline',
        request: ({ items }) => itemsById(items, [conditionalIndex(items)]),
      },
    ],
    async prepare(ask, { items }) {
      const path = `/data/${items.name}/_id/${items.id(conditionalIndex(items))}`;
      const plain = await ask('service', 'GET', path);
      const etag = plain.headers.get('etag');
      if (plain.status !== 200 || !etag)
        return { missing: `GET item answered ${plain.status} without an ETag` };
      const conditional = await ask('service', 'GET', path, { headers: { 'If-None-Match': etag } });
      if (conditional.status !== 304)
        return { missing: `If-None-Match with the current ETag answered ${conditional.status}` };
      return { etag };
    },
    checks: (totals) => [
      cpuRatioCheck(
        `A 304 costs < ${NOT_MODIFIED_CPU_MAX} × the service CPU of a 200`,
        NOT_MODIFIED_CPU_MAX,
        totals('not-modified'),
        totals('plain'),
        totals('baseline'),
      ),
    ],
  },
  {
    id: 'idle',
    title: `Idle: one instance with no request for ${IDLE_WATCH_MS / 1000} s, after ${IDLE_SETTLE_MS / 1000} s of rest (and the minute from ${IDLE_AFTER_LOAD_FROM_MS / 1000} s)`,
    route: '(none)',
    variants: [],
    async prepare(ask, { idleTimes = IDLE_TIMES }) {
      const idle = await idleBackground(ask, idleTimes);
      if (typeof idle === 'string') return { missing: idle };
      return {
        idle,
        notes: [
          '',
          `With no request, after ${idle.fromSeconds.toFixed(0)} s of rest (its polls back off while they find nothing: docs/deployment.md, "Idle cost"), the instance spent ${idle.cpuMsPerSecond.toFixed(2)} ms of CPU and sent ${idle.commandsPerSecond.toFixed(2)} database commands per second, watched for ${idle.seconds.toFixed(0)} s.`,
          ...(idle.afterLoad
            ? [
                '',
                `Not judged: the minute before, from ${idle.afterLoad.fromSeconds.toFixed(0)} s after the load, it spent ${idle.afterLoad.cpuMsPerSecond.toFixed(2)} ms of CPU and sent ${idle.afterLoad.commandsPerSecond.toFixed(2)} commands per second. That minute holds what the load leaves behind once: V8's collections that shrink the heap the load grew, and the polls still backing off.`,
              ]
            : []),
        ],
      };
    },
    checks: (_totals, run) => {
      const idle = run?.idle;
      const judged = (name: string, value: number | undefined, max: number, unit: string) =>
        value === undefined
          ? { name, status: 'n/a' as const, detail: 'not measured' }
          : {
              name,
              status: value <= max ? ('PASS' as const) : ('FAIL' as const),
              detail: `${value.toFixed(2)} ${unit} (at most ${max}; watched ${idle?.seconds.toFixed(0)} s after ${idle?.fromSeconds.toFixed(0)} s of rest)`,
            };
      return [
        judged(
          `An idle instance spends at most ${IDLE_CPU_MS_PER_S_MAX} ms of CPU per second`,
          idle?.cpuMsPerSecond,
          IDLE_CPU_MS_PER_S_MAX,
          'ms of CPU per second',
        ),
        judged(
          `An idle instance sends at most ${IDLE_COMMANDS_PER_S_MAX} database commands per second`,
          idle?.commandsPerSecond,
          IDLE_COMMANDS_PER_S_MAX,
          'commands per second',
        ),
      ];
    },
  },
];
