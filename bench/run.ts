// `npm run bench`: starts the built service and a baseline server on one database, seeds data,
// drives each scenario with autocannon from a separate process, compares what three features
// cost (metrics, Idempotency-Key, conditional GET), and writes BENCHMARKS.md.
// Modes: default (short), --long, --smoke (CI: tiny data, fails on any error); --large adds
// 1,000,000 items. Last, an export and an import of a namespace next to the baseline's
// (--transfer-only runs just that), then file uploads and downloads next to the driver's GridFS
// (--files-only runs just that). --schema-only runs just the JSON Schema comparison and the
// /health latency while hostile writes are validated (--health-only runs just that);
// --moves-only just the tenant moves. See docs/benchmarks.md.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import {
  loadDatabaseSettings,
  resolveDatabase,
  type ResolvedDatabase,
} from '../tools/dev-database';
import { call, expectStatus } from './lib/api';
import { freezeChecks, freezeMarkdown, type FreezeRun } from './lib/cluster-freeze';
import { compareClusterSpread } from './lib/cluster-spread';
import { runComparison } from './lib/compare';
import { IDLE_TIMES, SMOKE_IDLE_TIMES } from './lib/idle';
import { SEARCH_EXPAND_SIZES, SMOKE_SEARCH_EXPAND_SIZES } from './lib/search-expand';
import { comparisonChecks, comparisonsMarkdown, comparisonsSummary } from './lib/compare-report';
import { comparisons, costComparisons, type Comparison } from './lib/comparisons';
import { schemaComparison } from './lib/schema-cost';
import { fanOutMarkdown, sseFanOut, type FanOutResult } from './lib/sse-fanout';
import {
  healthChecks,
  healthLatency,
  healthMarkdown,
  healthSummary,
  type HealthRun,
} from './lib/health-latency';
import { liveQueries, liveQueriesMarkdown, type LiveQueryResult } from './lib/live-queries';
import { tailLatency, tailMarkdown, TAIL_CONNECTIONS, type TailRun } from './lib/tail-latency';
import { runFiles, type FilesRun } from './lib/files';
import { filesChecks, filesMarkdown, filesSummary } from './lib/files-report';
import {
  benchTenantMoves,
  tenantMoveChecks,
  tenantMoveMarkdown,
  type TenantMoveRun,
} from './lib/tenant-move';
import { runTransfer, setupTransfer, type TransferRun } from './lib/transfer';
import { transferChecks, transferMarkdown, transferSummary } from './lib/transfer-report';
import { probe, runLoad, sumLoads, type LoadSettings } from './lib/load-runner';
import { parseOptions } from './lib/options';
import { RESULTS, SERVICE_DIST } from './lib/paths';
import { memoryOf, stopAll, stopChild, untrackedChildPids } from './lib/processes';
import { checks, markdown, summary } from './lib/report';
import {
  scenarios,
  type BaseContext,
  type ItemsContext,
  type Phase,
  type Scenario,
  type ScenarioRequest,
  type TargetName,
} from './lib/scenarios';
import {
  itemId,
  itemTemplate,
  seedItems,
  seedProjects,
  setupItems,
  setupStandInItems,
  type Items,
  type SeedContext,
  type SeededProjects,
} from './lib/seed';
import {
  QUERY_TIMEOUT_MS,
  startBaseline,
  startService,
  type ServiceOptions,
  type Target,
} from './lib/servers';
import type { BenchOptions, ComparisonRun, ReportInfo, Run } from './lib/types';
import { startTokenService, type TokenService } from './lib/token-auth';

const ITEMS_COLLECTION = 'bench_items';
/**
 * The comparisons' own collection, small in every mode: the features' cost does not depend on
 * the data, and cheap lookups make many requests per round (on a scanning database, fewer items
 * leave more of each request's time to the service).
 */
const FEATURES_COLLECTION = 'bench_features';
const FEATURE_ITEMS = 200;

const log = (message: string): void => {
  process.stdout.write(`${message}\n`);
};
const fmt = (n: number | null | undefined, digits = 2): string =>
  typeof n === 'number' ? n.toFixed(digits) : '—';
const elapsed = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** A fixed-seed generator: the service and the baseline are sent the same ids. */
function pick(count: number, n: number): number[] {
  let state = 0x9e3779b9 ^ n;
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: count }, () => Math.floor(next() * n));
}

function machineInfo(): Pick<ReportInfo, 'cpu' | 'cores' | 'memoryGiB' | 'platform'> {
  let cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    // Not Linux: os.cpus() is good enough.
  }
  return {
    cpu,
    cores: os.cpus().length,
    memoryGiB: (os.totalmem() / 2 ** 30).toFixed(0),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

async function databaseLabel(database: ResolvedDatabase, db: Db): Promise<string> {
  let version = 'unknown';
  try {
    const info = await db.admin().command({ buildInfo: 1 });
    if (typeof info.version === 'string') version = info.version;
  } catch {
    // Reported as unknown.
  }
  switch (database.kind) {
    case 'ferretdb': {
      const ferret = /FerretDB (\S+)/.exec(database.description)?.[1] ?? '';
      return `FerretDB ${ferret} with the SQLite handler (reports MongoDB ${version})`;
    }
    case 'mongodb-memory-server':
      return `MongoDB ${version} (mongodb-memory-server)`;
    case 'external':
      return `MongoDB ${version} (MONGODB_URI)`;
  }
}

/** Everything started here, for cleanup(). */
const state: {
  database?: ResolvedDatabase;
  client?: MongoClient;
  dbName?: string;
  /** The export and import's own database (lib/transfer.ts). */
  transferDbName?: string;
  /** The files bench's own database (lib/files.ts). */
  filesDbName?: string;
  /** The tenant moves' own database (lib/tenant-move.ts). */
  movesDbName?: string;
  dataDir?: string;
  tmp?: string;
} = {};
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll().catch(() => undefined);
    if (state.client) {
      // On a MONGODB_URI server, remove what the run wrote; an embedded server goes with its data dir.
      const names = [
        state.dbName,
        state.transferDbName,
        state.filesDbName,
        state.movesDbName,
      ].filter((n): n is string => !!n);
      for (const name of state.database?.kind === 'external' ? names : []) {
        const main = state.client.db(name);
        // The tenants' databases on this server first: the placements name them.
        const placed = await main
          .collection<{ _id: string }>('tenant_placements')
          .find({ cluster: 'default' })
          .toArray()
          .catch(() => []);
        for (const { _id } of placed)
          await state.client
            .db(_id)
            .dropDatabase()
            .catch(() => undefined);
        await main.dropDatabase().catch(() => undefined);
      }
      await state.client.close().catch(() => undefined);
    }
    await state.database?.stop().catch(() => undefined);
    for (const dir of [state.dataDir, state.tmp])
      if (dir) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}

function onSignal(signal: NodeJS.Signals): void {
  log(`\n${signal}: stopping everything the benchmark started`);
  void cleanup().finally(() => process.exit(130));
}

/** The harness's context: what exists so far, and the processes a run keeps busy. */
interface HarnessContext extends Omit<BaseContext, 'target'> {
  rootKey: string;
  /** busyPids grows as servers start. */
  load: LoadSettings;
  projects?: SeededProjects;
  items?: ItemsContext['items'];
}

/** The request of `scenario` against `target`, and the size of the data it runs on. */
function requestOf(
  scenario: Scenario,
  ctx: HarnessContext,
  target: TargetName,
): { request: ScenarioRequest; size: number } {
  const base = { ...ctx, target };
  const missing = (what: string): Error =>
    new Error(`${scenario.id} runs before the ${what} are seeded`);
  switch (scenario.phase) {
    case 'other':
      return { request: scenario.request(base), size: 0 };
    case 'projects': {
      const { projects } = ctx;
      if (!projects) throw missing('projects');
      return { request: scenario.request({ ...base, projects }), size: projects.count };
    }
    case 'items-growth':
    case 'items-main':
    case 'items-write': {
      const { items } = ctx;
      if (!items) throw missing('items');
      return { request: scenario.request({ ...base, items }), size: items.size };
    }
  }
}

/** One scenario against one server: probe once, let the machine settle, then the load process. */
async function runScenario(
  options: BenchOptions,
  ctx: HarnessContext,
  scenario: Scenario,
  target: Target,
): Promise<Run> {
  const { request, size } = requestOf(scenario, ctx, target.name);
  const run: Run = {
    scenario: scenario.id,
    title: scenario.title,
    route: scenario.route,
    phase: scenario.phase,
    baseline: Boolean(scenario.baseline),
    target: target.name,
    size,
    page: request.page ?? (scenario.id.endsWith('page-1') ? 1 : undefined),
    problems: [],
  };

  const probed = await probe(target, request, ctx.rootKey);
  if (probed.missing) return { ...run, status: 'unavailable' };
  run.problems.push(...probed.problems);
  run.probeMs = probed.response.ms;
  // A run says something only if every connection gets a few requests done. When one request per
  // connection, served one after another, would take more than half the run (FerretDB beyond a
  // few thousand documents), the load would mostly leave abandoned requests for the database to
  // finish during the next scenario. Such a run reports its single-request latency instead.
  if (run.probeMs * options.connections > (options.duration * 1000) / 2) {
    run.problems.push(
      `a single request took ${fmt(run.probeMs)} ms: too slow for ${options.connections} connections in ${options.duration} s, not loaded`,
    );
    run.status = 'failed';
    run.tooSlow = true;
    log(
      `  ${target.name.padEnd(8)} ${scenario.title.padEnd(30)} ${String(size).padStart(8)}  ! ${run.problems.join('; ')}`,
    );
    return run;
  }

  const outcome = await runLoad(ctx.load, [{ target, request }], {
    seconds: options.duration,
    warmup: options.warmup,
  });
  run.peakRssKb = outcome.peakRssKb;
  run.notQuiet = outcome.notQuiet;
  run.result = outcome.rounds?.[0]?.[0];
  run.problems.push(...outcome.problems);
  if (run.result?.responses === 0)
    run.problems.push(
      `no response within ${options.duration} s (${options.connections} connections)`,
    );
  run.status = run.result && run.problems.length === 0 ? 'ok' : 'failed';
  const r = run.result;
  const cpu = r ? sumLoads([r]) : undefined;
  log(
    `  ${target.name.padEnd(8)} ${scenario.title.padEnd(30)} ${String(size).padStart(8)}  ` +
      (r && cpu
        ? `${r.requestsPerSecond.toFixed(1).padStart(9)} req/s  CPU ${fmt(cpu.cpuMs, 3)} ms/req  ${fmt(cpu.commands)} cmds/req  p50 ${fmt(r.latencyMs.p50)} ms  p99 ${fmt(r.latencyMs.p99)} ms  errors ${cpu.errors}  (single request ${fmt(run.probeMs)} ms)`
        : 'failed') +
      (run.problems.length ? `  ! ${run.problems.join('; ')}` : ''),
  );
  return run;
}

interface Outcome {
  runs: Run[];
  comparisonRuns: ComparisonRun[];
  fanOut?: FanOutResult;
  live?: LiveQueryResult;
  tail?: TailRun;
  freeze?: FreezeRun;
  moves?: TenantMoveRun;
  transfer?: TransferRun;
  files?: FilesRun;
  health?: HealthRun;
  info: ReportInfo;
}

/** The comparisons' collection (a stand-in when the build has no data routes), seeded. */
async function setupFeatures(seedCtx: SeedContext, subject: string, size: number): Promise<Items> {
  const features =
    (await setupItems(seedCtx, FEATURES_COLLECTION)) ??
    (await setupStandInItems(seedCtx, FEATURES_COLLECTION, subject));
  await seedItems(seedCtx, features, size);
  return features;
}

async function benchmark(options: BenchOptions): Promise<Outcome> {
  const started = Date.now();
  mkdirSync(RESULTS, { recursive: true });
  const logs = [
    'service',
    'service-metrics-on',
    'service-metrics-off',
    'service-events-off',
    'service-usage-on',
    'service-usage-off',
    'service-token',
    'service-one-cluster',
    'service-three-clusters',
    'service-transfer',
    'service-files',
    'baseline',
    'load',
  ];
  for (const file of logs.map((name) => `${name}.log`))
    rmSync(join(RESULTS, file), { force: true });
  const tmp = mkdtempSync(join(os.tmpdir(), 'pds-bench-'));
  state.tmp = tmp;
  state.dataDir = join(tmp, 'data');

  // The database the project resolves (MONGODB_URI, else an embedded one), started once here.
  const settings = await loadDatabaseSettings();
  const resolved = await resolveDatabase({ ...settings, dataDir: state.dataDir, log });
  state.database = resolved;
  // An embedded server is a child of this process (external ones cannot be watched).
  const databasePids = untrackedChildPids();
  const dbName = `pds_bench_${randomBytes(4).toString('hex')}`;
  state.dbName = dbName;
  const client = new MongoClient(resolved.uri);
  state.client = client;
  await client.connect();
  const db = client.db(dbName);
  const database = await databaseLabel(resolved, db);

  const adminKey = randomBytes(32).toString('base64url');
  const serviceOptions = { databaseUri: resolved.uri, dbName, adminKey };
  const service = await startService({ ...serviceOptions, name: 'service', metrics: true });
  log(`service ready at ${service.url} (${elapsed(started)})`);
  const user = expectStatus<{ profile: { subject: string }; apiKey: string }>(
    await call(service.url, 'POST', '/admin/users', {
      key: adminKey,
      body: { email: 'bench@example.com', subject: 'bench-user' },
    }),
    200,
    'POST /admin/users',
  );
  const ctx: HarnessContext = {
    load: {
      tmp,
      connections: options.connections,
      quietMaxMs: options.quietMaxMs,
      key: user.apiKey,
      busyPids: () => [service.child.pid, ...databasePids],
      databasePids,
    },
    runTag: randomBytes(3).toString('hex'),
    subject: user.profile.subject,
    rootKey: user.apiKey,
    pageLimit: options.pageLimit,
    pick,
  };
  const runs: Run[] = [];
  const notes: string[] = [];
  const seedCtx = { db, serviceUrl: service.url, rootKey: ctx.rootKey };

  log('\nitems');
  let items = await setupItems(seedCtx, ITEMS_COLLECTION);
  if (!items) {
    log('  POST /data/{c}: route not available; the baseline runs on a stand-in collection');
    notes.push(
      'The service has no data routes in this build: the baseline ran on a stand-in collection of the same documents.',
    );
    items = await setupStandInItems(seedCtx, ITEMS_COLLECTION, ctx.subject);
  }
  log(`  physical collection ${items.physical} (found by ${items.via})`);
  const features = await setupFeatures(seedCtx, ctx.subject, FEATURE_ITEMS);
  // Every full run ends with the export and import; the comparison-only runs leave it out.
  const withTransfer = options.transferOnly || !options.comparisonsOnly;
  if (withTransfer) state.transferDbName = `${dbName}_transfer`;
  const withFiles = options.filesOnly || !options.comparisonsOnly;
  if (withFiles) state.filesDbName = `${dbName}_files`;
  const transferSetup = withTransfer
    ? await setupTransfer(client, serviceOptions, ctx.runTag)
    : undefined;
  const baselineCollections = {
    [items.name]: itemTemplate(items),
    [features.name]: itemTemplate(features),
    ...(transferSetup && !('missing' in transferSetup) ? transferSetup.baselineCollections : {}),
  };
  const baseline = await startBaseline(resolved.uri, dbName, baselineCollections);
  ctx.load.busyPids = () => [service.child.pid, baseline.child.pid, ...databasePids];

  if (!options.comparisonsOnly)
    runs.push(...(await runScenarios(options, ctx, { service, baseline, seedCtx, items })));
  const serviceHwmKb = memoryOf(service.child.pid)?.hwmKb;
  const oneThingOnly =
    options.fanOutOnly ||
    options.liveOnly ||
    options.transferOnly ||
    options.schemaOnly ||
    options.healthOnly ||
    options.filesOnly ||
    options.movesOnly;
  const featureRuns = options.schemaOnly
    ? [await compareSchemaCost(options, ctx, service, features)]
    : oneThingOnly
      ? []
      : await compareFeatures(options, ctx, {
          service,
          baseline,
          features,
          serviceOptions,
          startOtherBaseline: (name) =>
            startBaseline(resolved.uri, dbName, baselineCollections, { name }),
          list: (options.costOnly ? costComparisons : [...comparisons, schemaComparison]).filter(
            (c) => !options.only || options.only.includes(c.id),
          ),
        });
  // `--only` names what runs: the cluster spread only when it names one of its comparisons.
  const clustersNamed =
    !options.only || options.only.some((id) => id === 'clusters-get' || id === 'clusters-post');
  const clusters =
    oneThingOnly || options.costOnly || !clustersNamed
      ? { runs: [], freeze: undefined }
      : await compareClusterSpread({
          settings: options.compare,
          load: ctx.load,
          database: settings,
          tmp,
          mainUri: resolved.uri,
          service: serviceOptions,
          ctx: {
            ...ctx,
            target: 'service',
            items: { name: features.name, size: features.size, id: itemId },
          },
          log,
        });
  const comparisonRuns = [...featureRuns, ...clusters.runs];

  // On the main service, after the comparisons; a few large POSTs per case, one at a time.
  let health: HealthRun | undefined;
  if (
    options.schemaOnly ||
    options.healthOnly ||
    (!oneThingOnly && !options.costOnly && !options.only)
  ) {
    const posts = options.smoke ? 2 : 5;
    log(`\n/health latency while hostile writes are validated: ${posts} POSTs per case`);
    health = await healthLatency(service, ctx.rootKey, { posts, log });
  }
  const { freeze } = clusters;

  // Move time against tenant size and write rate (docs/deployment.md, "How long a move takes"),
  // on a database of its own: its instance names clusters a and b, and the main database's
  // placements name others.
  const withMoves = !((oneThingOnly && !options.movesOnly) || options.costOnly || options.only);
  if (withMoves) state.movesDbName = `${dbName}_moves`;
  const moves =
    withMoves && state.movesDbName
      ? await benchTenantMoves({
          sizes: options.smoke ? [200] : [1_000, 4_000],
          writers: options.smoke ? [2] : [0, 8],
          database: settings,
          tmp,
          mainUri: resolved.uri,
          service: { ...serviceOptions, dbName: state.movesDbName },
          log,
        })
      : undefined;

  let tail: TailRun | undefined;
  if (!oneThingOnly && !options.costOnly && !options.only) {
    const seconds = options.smoke ? 1 : Math.max(5, options.duration);
    log(`\ntail latency: GET item by _id, ${TAIL_CONNECTIONS} connections, ${seconds} s`);
    tail = await tailLatency(
      ctx.load,
      service,
      { items: { name: features.name, size: features.size, id: itemId }, pick },
      seconds,
    );
    const r = tail.result;
    const lag = r?.eventLoopLagMs;
    log(
      r
        ? `  ${r.requestsPerSecond.toFixed(1)} req/s  p50 ${fmt(r.latencyMs.p50)} ms  p99 ${fmt(r.latencyMs.p99)} ms  errors ${r.unexpected + r.errors}  RSS ${(tail.peakRssKb / 1024).toFixed(0)} MiB  event-loop lag p99 ${fmt(lag?.p99)} ms, max ${fmt(lag?.max)} ms`
        : `  failed: ${tail.problems.join('; ')}`,
    );
  }

  const fanOutSize = options.smoke
    ? { clients: 5, events: 10, timeoutMs: 30_000 }
    : { clients: 100, events: 100, timeoutMs: 120_000 };
  let fanOut: FanOutResult | undefined;
  if (
    !options.transferOnly &&
    !options.schemaOnly &&
    !options.healthOnly &&
    !options.liveOnly &&
    !options.filesOnly &&
    !options.movesOnly &&
    !options.costOnly &&
    !options.only
  ) {
    log(`\nchange feed fan-out: ${fanOutSize.clients} SSE clients, ${fanOutSize.events} events`);
    fanOut = await sseFanOut(service, ctx.rootKey, fanOutSize);
    log(
      `  ${fanOut.deliveredPerSecond} events/s delivered in ${fanOut.seconds} s; ${fanOut.cpuMsPerEvent} CPU ms and ${fanOut.commandsPerEvent} DB cmds per event; RSS ${fanOut.rssIdleMiB} → ${fanOut.rssWithClientsMiB} → ${fanOut.rssAfterMiB} MiB`,
    );
  }

  const liveSize = options.smoke
    ? { streams: 5, changes: 16, timeoutMs: 30_000 }
    : { streams: 100, changes: 1000, timeoutMs: 300_000 };
  let live: LiveQueryResult | undefined;
  if (
    !options.transferOnly &&
    !options.schemaOnly &&
    !options.healthOnly &&
    !options.fanOutOnly &&
    !options.filesOnly &&
    !options.movesOnly &&
    !options.costOnly &&
    !options.only
  ) {
    log(`\nlive queries: ${liveSize.streams} streams, ${liveSize.changes} changes`);
    live = await liveQueries(service, ctx.rootKey, db, liveSize);
    for (const l of live.legs)
      log(
        `  ${l.label}: ${l.deliveredPerSecond} events/s, ${l.cpuMsPerChange} CPU ms/change, ${l.commandsPerChange} DB cmds/change, ${l.incomplete} streams short`,
      );
  }

  // Last, as the longest part; on a database of its own (lib/transfer.ts).
  let transfer: TransferRun | undefined;
  if (withTransfer) {
    log(`\nexport and import: ${options.transferItems.toLocaleString('en-US')} items`);
    transfer =
      !transferSetup || 'missing' in transferSetup
        ? {
            size: options.transferItems,
            seedSeconds: 0,
            legs: [],
            missing: transferSetup?.missing ?? 'not set up',
          }
        : await runTransfer({
            serviceOptions,
            baseline,
            baselineKey: ctx.rootKey,
            load: ctx.load,
            setup: transferSetup,
            size: options.transferItems,
            log,
          });
  }

  // On a database of its own too, with an instance of its own (lib/files.ts).
  let files: FilesRun | undefined;
  if (withFiles && state.filesDbName) {
    const { smallFiles, largeMiB, rounds } = options.files;
    log(`\nfiles: ${smallFiles} × 1 MiB and 1 × ${largeMiB} MiB, ${rounds} rounds`);
    files = await runFiles({
      serviceOptions,
      dbName: state.filesDbName,
      client,
      baseline,
      baselineKey: ctx.rootKey,
      load: ctx.load,
      settings: options.files,
      runTag: ctx.runTag,
      log,
    });
  }

  if (resolved.kind === 'ferretdb') {
    notes.push(
      'FerretDB v1 with SQLite evaluates most filters, sorts and counts by scanning the collection, so every number that depends on an index is far below what MongoDB gives; set MONGODB_URI to benchmark on MongoDB.',
    );
  }
  if (resolved.kind !== 'external' && databasePids.length === 0)
    notes.push(
      'The database CPU time per request could not be read (no embedded server process found).',
    );
  const slowSettle = runs.filter((r) => r.notQuiet);
  if (slowSettle.length) {
    notes.push(
      `The machine was still busy ${options.quietMaxMs / 1000} s after the previous run before: ${slowSettle.map((r) => `${r.target} ${r.title} (${r.size})`).join(', ')}.`,
    );
  }
  log(`\nfinished in ${elapsed(started)}`);
  return {
    runs,
    comparisonRuns,
    fanOut,
    live,
    tail,
    freeze,
    moves,
    transfer,
    files,
    health,
    info: {
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      node: process.version,
      database,
      ...machineInfo(),
      mainSize: options.mainSize,
      queryTimeoutMs: QUERY_TIMEOUT_MS,
      serviceHwmKb,
      rateLimitStore: process.env.RATE_LIMIT_STORE ?? 'mongo',
      notes,
    },
  };
}

/** Every scenario, phase by phase, growing the data in between. */
async function runScenarios(
  options: BenchOptions,
  ctx: HarnessContext,
  {
    service,
    baseline,
    seedCtx,
    items,
  }: { service: Target; baseline: Target; seedCtx: SeedContext; items: Items },
): Promise<Run[]> {
  const runs: Run[] = [];
  const run = async (phase: Phase, targets: Target[]): Promise<void> => {
    for (const scenario of scenarios.filter((s) => s.phase === phase)) {
      for (const target of targets) {
        if (target.name === 'baseline' && !scenario.baseline) continue;
        runs.push(await runScenario(options, ctx, scenario, target));
      }
    }
  };

  log('\nother routes');
  await run('other', [service]);

  log(`\nprojects: seeding ${options.projects.toLocaleString('en-US')}`);
  const seedStart = Date.now();
  const projects = await seedProjects(seedCtx, options.projects);
  if (projects) {
    log(
      `  seeded in ${elapsed(seedStart)} (collection ${projects.collection}, ${projects.builtWith})`,
    );
    ctx.projects = projects;
    await run('projects', [service]);
  } else {
    log('  POST /project: route not available');
    for (const s of scenarios.filter((x) => x.phase === 'projects')) {
      runs.push({
        scenario: s.id,
        title: s.title,
        route: s.route,
        phase: s.phase,
        target: 'service',
        size: options.projects,
        status: 'unavailable',
        problems: [],
      });
    }
  }

  log('\nitems');
  const itemsSeen = { name: items.name, size: 0, id: itemId };
  ctx.items = itemsSeen;
  const both = [service, baseline];
  for (const size of options.itemSizes) {
    const t = Date.now();
    await seedItems(seedCtx, items, size);
    itemsSeen.size = size;
    log(`  ${size.toLocaleString('en-US')} items (seeded in ${elapsed(t)})`);
    await run('items-growth', both);
    if (size === options.mainSize) await run('items-main', both);
  }
  await run('items-write', both);
  return runs;
}

/**
 * The feature comparisons, on their own small collection. Metrics are compared between two
 * instances started for it, one with metrics on and one off: both fresh, so that neither has
 * served (and been optimised by) more requests than the other. The extra servers (those two, the
 * instance with the feed off, the old baseline) are started only for the comparisons that use
 * them, run only now and are stopped right after, so their idle timers stay out of the rest.
 */
async function compareFeatures(
  options: BenchOptions,
  ctx: HarnessContext,
  {
    service,
    baseline,
    features,
    serviceOptions,
    startOtherBaseline,
    list,
  }: {
    service: Target;
    baseline: Target;
    features: Items;
    serviceOptions: Omit<ServiceOptions, 'name' | 'metrics'>;
    /** The baseline before its key cache, or the framework floor (lib/servers.ts). */
    startOtherBaseline: (name: 'baseline-uncached' | 'baseline-nest') => Promise<Target>;
    list: Comparison[];
  },
): Promise<ComparisonRun[]> {
  log(`\nfeature comparisons (${features.size.toLocaleString('en-US')} items)`);
  const needed = new Set(list.flatMap((c) => c.variants.map((v) => v.target)));
  const starters: [TargetName, () => Promise<Target>][] = [
    ['baseline-uncached', () => startOtherBaseline('baseline-uncached')],
    ['baseline-nest', () => startOtherBaseline('baseline-nest')],
    [
      'service-metrics-on',
      () => startService({ ...serviceOptions, name: 'service-metrics-on', metrics: true }),
    ],
    [
      'service-metrics-off',
      () => startService({ ...serviceOptions, name: 'service-metrics-off', metrics: false }),
    ],
    [
      'service-events-off',
      () =>
        startService({
          ...serviceOptions,
          name: 'service-events-off',
          metrics: true,
          events: false,
        }),
    ],
    // Metering on and off at its default flush interval, as production runs it.
    ...(['on', 'off'] as const).map((state): [TargetName, () => Promise<Target>] => [
      `service-usage-${state}`,
      () =>
        startService({
          ...serviceOptions,
          name: `service-usage-${state}`,
          metrics: true,
          env: { ...serviceOptions.env, USAGE_ENABLED: String(state === 'on') },
        }),
    ]),
  ];
  const extra: Partial<Record<TargetName, Target>> = {};
  // The token comparison's instance comes with its issuer and the bench user's token.
  let tokens: TokenService | undefined;
  const busyBefore = ctx.load.busyPids;
  ctx.load.busyPids = () => [...busyBefore(), ...Object.values(extra).map((t) => t.child.pid)];
  const results: ComparisonRun[] = [];
  try {
    // One after the other: two starts at once can stall the database past the connect timeout.
    for (const [name, start] of starters) if (needed.has(name)) extra[name] = await start();
    if (needed.has('service-token')) {
      const started = await startTokenService(serviceOptions, ctx.subject);
      tokens = started;
      extra['service-token'] = started.target;
    }
    const token = tokens && {
      accessToken: tokens.accessToken,
      linkProblem: tokens.linkProblem,
      jwksFetches: () => tokens?.issuer.jwksFetches ?? 0,
    };
    for (const comparison of list) {
      results.push(
        await runComparison(comparison, {
          load: ctx.load,
          settings: options.compare,
          targets: { service, baseline, ...extra },
          ctx: {
            ...ctx,
            target: 'service',
            items: { name: features.name, size: features.size, id: itemId },
            token,
            searchExpandSizes: options.smoke ? SMOKE_SEARCH_EXPAND_SIZES : SEARCH_EXPAND_SIZES,
            idleTimes: options.smoke ? SMOKE_IDLE_TIMES : IDLE_TIMES,
          },
          log,
        }),
      );
    }
  } finally {
    ctx.load.busyPids = busyBefore;
    await Promise.all(Object.values(extra).map((t) => stopChild(t.child)));
    await tokens?.issuer.stop();
  }
  return results;
}

/** `--schema-only`: the JSON Schema comparison alone, on the main service. */
function compareSchemaCost(
  options: BenchOptions,
  ctx: HarnessContext,
  service: Target,
  features: Items,
): Promise<ComparisonRun> {
  log('\nJSON Schema comparison');
  return runComparison(schemaComparison, {
    load: ctx.load,
    settings: options.compare,
    targets: { service },
    ctx: {
      ...ctx,
      target: 'service',
      items: { name: features.name, size: features.size, id: itemId },
    },
    log,
  });
}

async function main(): Promise<void> {
  if (!existsSync(join(SERVICE_DIST, 'main.js'))) {
    process.stderr.write('dist/main.js is missing: run `npm run build` (npm run bench does it).\n');
    process.exit(1);
  }
  const options = parseOptions(process.argv.slice(2));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let outcome: Outcome;
  try {
    outcome = await benchmark(options);
  } finally {
    await cleanup();
  }
  const { runs, comparisonRuns, fanOut, live, tail, freeze, moves, transfer, files, health, info } =
    outcome;
  const writeSize = options.itemSizes.at(-1) ?? 0;
  const checkList = checks(runs, comparisonRuns, {
    ...options,
    growthSizes: options.itemSizes,
    writeSize,
  });
  const comparisonCheckList = [
    ...comparisonChecks(comparisonRuns, options.smoke),
    ...(options.fanOutOnly ||
    options.liveOnly ||
    options.transferOnly ||
    options.schemaOnly ||
    options.healthOnly ||
    options.filesOnly ||
    options.movesOnly ||
    options.costOnly
      ? []
      : freezeChecks(freeze, options.smoke)),
    ...tenantMoveChecks(moves),
  ];
  const transferCheckList = transferChecks(transfer, options);
  const filesCheckList = filesChecks(files, options);
  const healthCheckList = healthChecks(health, options.smoke);
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(
    options.out,
    markdown({
      info,
      options,
      runs,
      checkList,
      comparisons:
        comparisonsMarkdown(comparisonRuns, comparisonCheckList) +
        healthMarkdown(health, healthCheckList) +
        tailMarkdown(tail) +
        freezeMarkdown(freeze) +
        tenantMoveMarkdown(moves) +
        fanOutMarkdown(fanOut) +
        liveQueriesMarkdown(live) +
        transferMarkdown(transfer, transferCheckList) +
        filesMarkdown(files, filesCheckList),
    }),
  );
  writeFileSync(
    options.json,
    `${JSON.stringify({ info, options, runs, comparisonRuns, tail, freeze, moves, fanOut, live, transfer, files, health, checkList, comparisonCheckList, transferCheckList, filesCheckList, healthCheckList }, null, 2)}\n`,
  );
  process.stdout.write(summary({ runs, checkList }));
  process.stdout.write(comparisonsSummary(comparisonRuns, comparisonCheckList));
  process.stdout.write(transferSummary(transfer, transferCheckList));
  process.stdout.write(filesSummary(files, filesCheckList));
  process.stdout.write(healthSummary(health, healthCheckList));
  log(`report: ${relative(process.cwd(), options.out) || options.out}`);
  // In smoke mode the performance checks are n/a, so this fails on errors and slow runs only.
  const failed = [
    ...checkList,
    ...comparisonCheckList,
    ...transferCheckList,
    ...filesCheckList,
    ...healthCheckList,
  ].some((c) => c.status === 'FAIL');
  process.exit(failed ? 1 : 0);
}

main().catch(async (error: unknown) => {
  // Configuration and database problems carry their own explanation; anything else needs the stack.
  const expected =
    error instanceof Error &&
    ['ConfigValidationError', 'DatabaseUnavailableError'].includes(error.name);
  process.stderr.write(
    `bench failed: ${expected ? error.message : error instanceof Error ? (error.stack ?? String(error)) : String(error)}\n`,
  );
  await cleanup();
  process.exit(1);
});
