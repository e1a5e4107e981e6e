// Tenants on three clusters next to tenants on one: what spreading tenants over DATA_CLUSTERS
// costs the service per request. Two more database servers are started as clusters, and two more
// instances on the bench's main database: one whose DATA_CLUSTERS is the main server alone, one
// with all three. Each gets three tenants (placed by region, so the three-cluster instance has one
// on each cluster) with items of their own; GET by _id and POST take the tenants in turn. The
// variants are judged on the server's CPU per request, round against round.
import { join } from 'node:path';
import { resolveDatabase, type DatabaseSettings } from '../../tools/dev-database';
import { call, expectStatus } from './api';
import { runComparison } from './compare';
import { freezeChecks, measureFreeze, type FreezeRun } from './cluster-freeze';
import { pct, quantile, type Comparison, type ComparisonContext } from './comparisons';
import type { LoadSettings, LoadTotals } from './load-runner';
import { stopChild } from './processes';
import { startService, type ServiceOptions, type Target } from './servers';
import type { Check, CompareSettings, ComparisonRun } from './types';

/** Items of each tenant, read by _id in turn. */
const ITEMS_PER_TENANT = 50;
const COLLECTION = 'cluster_spread';
/** The median CPU ratio within this of 1 is no difference (issue: ≤ 5 %). */
export const SPREAD_CPU_TOLERANCE = 0.05;

const REGIONS = ['r1', 'r2', 'r3'] as const;

interface Tenant {
  key: string;
}

/**
 * No difference: the median of the rounds' CPU ratios within the tolerance, or — when the rounds
 * spread wider than the tolerance, so that a difference that small cannot be told — their middle
 * half containing 1.
 */
export function noDifferenceCheck(
  name: string,
  spread: LoadTotals | undefined,
  single: LoadTotals | undefined,
): Check {
  const ratios = (spread?.cpuMsPerRound ?? []).flatMap((a, i) => {
    const b = single?.cpuMsPerRound[i];
    return a && b ? [a / b] : [];
  });
  const median = quantile(ratios, 0.5);
  if (!spread?.cpuMs || !single?.cpuMs || median === undefined)
    return { name, status: 'n/a', detail: 'not measured' };
  const low = quantile(ratios, 0.25) ?? median;
  const high = quantile(ratios, 0.75) ?? median;
  const within = Math.abs(median - 1) <= SPREAD_CPU_TOLERANCE;
  const noisy = high - low > 2 * SPREAD_CPU_TOLERANCE && low <= 1 && high >= 1;
  return {
    name,
    status: within || noisy ? 'PASS' : 'FAIL',
    detail:
      `CPU ${spread.cpuMs.toFixed(3)} vs ${single.cpuMs.toFixed(3)} ms per request; median ${pct(median)} ` +
      `over ${ratios.length} rounds (middle half ${pct(low)} … ${pct(high)}; tolerance ±${SPREAD_CPU_TOLERANCE * 100} %` +
      `${within ? '' : noisy ? ', too noisy to tell, and 1 lies in the middle half' : ''})`,
  };
}

/** A tenant in each of `regions` (one per entry), with its items. */
const clusterChecks =
  (title: string) =>
  (totals: (variant: string) => LoadTotals | undefined): Check[] => [
    noDifferenceCheck(
      `${title}: CPU per request with tenants on three clusters as on one (±${SPREAD_CPU_TOLERANCE * 100} %)`,
      totals('three-clusters'),
      totals('one-cluster'),
    ),
  ];

/** The checks of the cluster comparisons, by comparison id (the report judges runs with them). */
export const CLUSTER_COMPARISON_CHECKS: Pick<Comparison, 'id' | 'checks'>[] = [
  { id: 'clusters-get', checks: clusterChecks('GET item by _id') },
  { id: 'clusters-post', checks: clusterChecks('POST item') },
];

async function createTenants(
  url: string,
  adminKey: string,
  tag: string,
  regions: readonly string[],
): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  for (const [t, region] of regions.entries()) {
    const created = expectStatus<{ apiKey: string }>(
      await call(url, 'POST', '/admin/users', {
        key: adminKey,
        body: { email: `${tag}-${t}@example.com`, region },
      }),
      200,
      'POST /admin/users',
    );
    for (let i = 0; i < ITEMS_PER_TENANT; i += 1) {
      expectStatus(
        await call(url, 'POST', `/data/${COLLECTION}`, {
          key: created.apiKey,
          body: { item: { _id: `c${i}`, n: i, text: 'spread' } },
        }),
        200,
        `POST /data/${COLLECTION}`,
      );
    }
    tenants.push({ key: created.apiKey });
  }
  return tenants;
}

/** GET by _id, taking the tenants in turn (a path per request, with its key). */
const reads = (tenants: Tenant[]) => ({
  method: 'GET',
  paths: tenants.flatMap((_, t) =>
    Array.from(
      { length: 10 },
      (__, i) => `/data/${COLLECTION}/_id/c${(i * 7 + t) % ITEMS_PER_TENANT}`,
    ),
  ),
  keys: tenants.flatMap((tenant) => Array.from({ length: 10 }, () => tenant.key)),
});

/** GET by _id and POST, each taking the tenants in turn. */
function comparisonsOf(one: Tenant[], three: Tenant[]): Comparison[] {
  const writes = (tenants: Tenant[]) => ({
    method: 'POST',
    paths: tenants.map(() => `/data/${COLLECTION}`),
    keys: tenants.map((tenant) => tenant.key),
    body: '{"item":{"n":%SEQ%,"text":"spread"}}',
  });
  const variants = (
    request: (tenants: Tenant[]) => ReturnType<typeof reads> | ReturnType<typeof writes>,
  ) => [
    {
      id: 'one-cluster',
      label: 'tenants on one cluster',
      target: 'service-one-cluster' as const,
      request: () => request(one),
    },
    {
      id: 'three-clusters',
      label: 'tenants on three clusters',
      target: 'service-three-clusters' as const,
      request: () => request(three),
    },
  ];
  return [
    {
      id: 'clusters-get',
      title: 'Clusters: GET item by _id, tenants on three clusters vs one',
      route: 'GET /data/{c}/_id/{id}',
      variants: variants(reads),
      prepare: () => Promise.resolve({}),
      checks: clusterChecks('GET item by _id'),
    },
    {
      id: 'clusters-post',
      title: 'Clusters: POST item, tenants on three clusters vs one',
      route: 'POST /data/{c}',
      variants: variants(writes),
      prepare: () => Promise.resolve({}),
      checks: clusterChecks('POST item'),
    },
  ];
}

/**
 * Starts the clusters and the two instances, runs both comparisons, stops what it started.
 * `mainUri` is the bench's main database server; the tenants the main instance placed there are
 * on cluster `default`, which both instances therefore list.
 */
export async function compareClusterSpread(options: {
  settings: CompareSettings;
  load: LoadSettings;
  database: DatabaseSettings;
  tmp: string;
  mainUri: string;
  service: Omit<ServiceOptions, 'name' | 'metrics'>;
  ctx: ComparisonContext;
  log: (message: string) => void;
}): Promise<{ runs: ComparisonRun[]; freeze?: FreezeRun }> {
  const { log } = options;
  log('\nclusters: tenants on three clusters vs one');
  const clusters = await Promise.all(
    ['cluster-b', 'cluster-c'].map((name) =>
      resolveDatabase({
        ...options.database,
        dataDir: join(options.tmp, name),
        log: () => undefined,
      }),
    ),
  );
  const targets: Target[] = [];
  try {
    const [b, c] = clusters as [(typeof clusters)[number], (typeof clusters)[number]];
    const main = { uri: options.mainUri, region: REGIONS[0] };
    // The one-cluster instance starts first: it refuses to start once tenants are on b or c.
    const one = await startService({
      ...options.service,
      name: 'service-one-cluster',
      metrics: true,
      env: { DATA_CLUSTERS: JSON.stringify({ default: main }) },
    });
    targets.push(one);
    const three = await startService({
      ...options.service,
      name: 'service-three-clusters',
      metrics: true,
      env: {
        DATA_CLUSTERS: JSON.stringify({
          default: main,
          b: { uri: b.uri, region: REGIONS[1] },
          c: { uri: c.uri, region: REGIONS[2] },
        }),
      },
    });
    targets.push(three);
    // Three tenants on the main server for the one-cluster instance, one per cluster for the other.
    const { adminKey } = options.service;
    const oneTenants = await createTenants(one.url, adminKey, 'one', [
      REGIONS[0],
      REGIONS[0],
      REGIONS[0],
    ]);
    const threeTenants = await createTenants(three.url, adminKey, 'three', REGIONS);
    const load: LoadSettings = {
      ...options.load,
      databasePids: [
        ...options.load.databasePids,
        ...clusters.flatMap((d) => (d.pid ? [d.pid] : [])),
      ],
      busyPids: () => [...options.load.busyPids(), one.child.pid, three.child.pid],
    };
    const runs: ComparisonRun[] = [];
    for (const comparison of comparisonsOf(oneTenants, threeTenants)) {
      runs.push(
        await runComparison(comparison, {
          load,
          settings: options.settings,
          targets: { 'service-one-cluster': one, 'service-three-clusters': three },
          ctx: options.ctx,
          log,
        }),
      );
    }
    const frozen = clusters[1];
    if (!frozen?.pid) return { runs };
    log("\na frozen cluster: the other clusters' tenants before and during");
    const freeze = await measureFreeze({
      load,
      target: three,
      others: reads(threeTenants.slice(0, 2)),
      frozenPid: frozen.pid,
      frozenKey: (threeTenants[2] as Tenant).key,
      frozenPath: `/data/${COLLECTION}/_id/c0`,
      seconds: Math.max(2, options.settings.seconds * 2),
      rounds: options.settings.rounds,
    });
    log(`  ${freezeChecks(freeze, false)[0]?.detail ?? ''}`);
    return { runs, freeze };
  } finally {
    await Promise.all(targets.map((target) => stopChild(target.child)));
    await Promise.all(clusters.map((cluster) => cluster.stop()));
  }
}
