// `npm run bench`: starts the built service and a baseline server on one database, seeds data,
// drives each scenario with autocannon from a separate process, and writes BENCHMARKS.md.
// Modes: default (short), --long, --smoke (CI: tiny data, fails on any error); --large adds
// 1,000,000 items. See docs/benchmarks.md.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import {
  findFreePort,
  loadDatabaseSettings,
  resolveDatabase,
  type ResolvedDatabase,
} from '../tools/dev-database';
import { call, expectStatus, problemOf, routeMissing } from './lib/api';
import { RESULTS, ROOT, SERVICE_DIST } from './lib/paths';
import {
  memoryOf,
  spawnTracked,
  startRssSampler,
  stopAll,
  stopChild,
  untrackedChildPids,
  waitForExit,
  waitForHttpOk,
  waitForQuiet,
  type TrackedChild,
} from './lib/processes';
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
  type SeededProjects,
} from './lib/seed';
import type { BenchOptions, LoadResult, LoadSpec, Mode, ReportInfo, Run } from './lib/types';

const ITEMS_COLLECTION = 'bench_items';
const QUERY_TIMEOUT_MS = 60_000;

type ModeSettings = Pick<
  BenchOptions,
  'itemSizes' | 'projects' | 'pageLimit' | 'duration' | 'warmup' | 'connections' | 'quietMaxMs'
>;

const MODES: Record<Mode, ModeSettings> = {
  smoke: {
    itemSizes: [200],
    projects: 200,
    pageLimit: 10,
    duration: 1,
    warmup: 0,
    connections: 4,
    quietMaxMs: 5_000,
  },
  default: {
    itemSizes: [10_000, 100_000],
    projects: 100_000,
    pageLimit: 100,
    duration: 3,
    warmup: 0,
    connections: 10,
    quietMaxMs: 30_000,
  },
  long: {
    itemSizes: [10_000, 100_000],
    projects: 100_000,
    pageLimit: 100,
    duration: 20,
    warmup: 3,
    connections: 10,
    quietMaxMs: 60_000,
  },
};

const USAGE = `Usage: npm run bench [-- options]
  (no option)   short run, 3 s per scenario, 10 connections, writes BENCHMARKS.md
  --long        20 s per scenario after a 3 s warm-up
  --large       also 1,000,000 items (alias --full)
  --smoke       tiny data, 1 s per scenario; writes bench/results/smoke.md; exits 1 on any error
  --allow-missing-routes   report routes that answer 404 ROUTE_NOT_FOUND as "route not available"
                           instead of failing (for a service built without some modules)
  --duration S, --connections N   override the mode's values
  --out FILE    where to write the Markdown report`;

const VALUE_OPTIONS = ['--duration', '--connections', '--out'];
const FLAGS = ['--smoke', '--long', '--large', '--full', '--allow-missing-routes', '--help'];

function parseOptions(argv: string[]): BenchOptions {
  const flags = new Set<string>();
  const values: Record<string, string | undefined> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (VALUE_OPTIONS.includes(arg)) values[arg.slice(2)] = argv[++i];
    else if (FLAGS.includes(arg)) flags.add(arg.slice(2));
    else throw new Error(`unknown option ${arg}\n${USAGE}`);
  }
  if (flags.has('help')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (flags.has('smoke') && flags.has('long'))
    throw new Error('--smoke and --long exclude each other');
  const mode: Mode = flags.has('smoke') ? 'smoke' : flags.has('long') ? 'long' : 'default';
  const settings = { ...MODES[mode] };
  if (flags.has('large') || flags.has('full'))
    settings.itemSizes = [...settings.itemSizes, 1_000_000];
  if (values.duration) settings.duration = Number(values.duration);
  if (values.connections) settings.connections = Number(values.connections);
  if (!(settings.duration > 0) || !(settings.connections >= 1))
    throw new Error(`bad --duration or --connections\n${USAGE}`);
  const smoke = mode === 'smoke';
  return {
    mode,
    ...settings,
    smoke,
    allowMissingRoutes: flags.has('allow-missing-routes'),
    mainSize: settings.itemSizes.includes(100_000) ? 100_000 : (settings.itemSizes.at(-1) ?? 0),
    out: values.out
      ? resolve(values.out)
      : smoke
        ? join(RESULTS, 'smoke.md')
        : join(ROOT, 'BENCHMARKS.md'),
    argsLabel: argv.length ? ` -- ${argv.join(' ')}` : '',
  };
}

const log = (message: string): void => {
  process.stdout.write(`${message}\n`);
};
const fmt = (n: number | null | undefined): string => (typeof n === 'number' ? n.toFixed(2) : '—');
const elapsed = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

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
  dataDir?: string;
  tmp?: string;
} = {};
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll().catch(() => undefined);
    if (state.client) {
      // On a MONGODB_URI server, remove what the run wrote; an embedded server goes with its data dir.
      if (state.database?.kind === 'external' && state.dbName) {
        await state.client
          .db(state.dbName)
          .dropDatabase()
          .catch(() => undefined);
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

interface Target {
  name: TargetName;
  url: string;
  child: TrackedChild;
}

interface Service extends Target {
  adminKey: string;
}

async function startService(databaseUri: string, dbName: string): Promise<Service> {
  const port = await findFreePort();
  const adminKey = randomBytes(32).toString('base64url');
  const child = spawnTracked('service', [join(SERVICE_DIST, 'main.js')], {
    cwd: ROOT,
    logPath: join(RESULTS, 'service.log'),
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_API_KEY: adminKey,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '1000000000',
      // Slow queries are measured, not cut off: the baseline has no time limit either.
      QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      MONGODB_URI: databaseUri,
      MONGODB_DB_NAME: dbName,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttpOk(`${url}/health/ready`, child, 60_000);
  } catch (error) {
    throw new Error(`${messageOf(error)} (its output: bench/results/service.log)`);
  }
  return { name: 'service', url, child, adminKey };
}

async function startBaseline(
  databaseUri: string,
  dbName: string,
  collections: Record<string, unknown>,
): Promise<Target> {
  const port = await findFreePort();
  const child = spawnTracked('baseline', [join(__dirname, 'baseline.js')], {
    cwd: ROOT,
    logPath: join(RESULTS, 'baseline.log'),
    env: {
      ...process.env,
      PORT: String(port),
      MONGODB_URI: databaseUri,
      MONGODB_DB_NAME: dbName,
      BASELINE_COLLECTIONS: JSON.stringify(collections),
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttpOk(`${url}/health`, child, 30_000);
  return { name: 'baseline', url, child };
}

/** The harness's context: what exists so far, and the processes a run keeps busy. */
interface HarnessContext extends Omit<BaseContext, 'target'> {
  rootKey: string;
  busyPids(): (number | undefined)[];
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

let loadRuns = 0;

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

  const probe = await call(
    target.url,
    request.method,
    (request.paths[0] ?? '').replaceAll('%SEQ%', '0'),
    { key: ctx.rootKey, rawBody: request.body?.replaceAll('%SEQ%', '0') },
  );
  if (routeMissing(probe)) return { ...run, status: 'unavailable' };
  if (probe.status < 200 || probe.status > 299) {
    const { code, detail } = problemOf(probe);
    run.problems.push(
      `probe answered ${probe.status} ${code ?? ''} ${detail ?? probe.text.slice(0, 200)}`.trim(),
    );
  } else {
    const problem = request.verify?.(probe);
    if (problem) run.problems.push(`probe: ${problem}`);
  }
  run.probeMs = probe.ms;
  // A run says something only if every connection gets a few requests done. When one request per
  // connection, served one after another, would take more than half the run (FerretDB beyond a
  // few thousand documents), the load would mostly leave abandoned requests for the database to
  // finish during the next scenario. Such a run reports its single-request latency instead.
  if (probe.ms * options.connections > (options.duration * 1000) / 2) {
    run.problems.push(
      `a single request took ${fmt(probe.ms)} ms: too slow for ${options.connections} connections in ${options.duration} s, not loaded`,
    );
    run.status = 'failed';
    run.tooSlow = true;
    log(
      `  ${target.name.padEnd(8)} ${scenario.title.padEnd(30)} ${String(size).padStart(8)}  ! ${run.problems.join('; ')}`,
    );
    return run;
  }

  const quiet = await waitForQuiet(ctx.busyPids(), options.quietMaxMs);
  if (!quiet.quiet) run.notQuiet = quiet.waitedMs;

  const specPath = join(state.tmp ?? '', `load-${++loadRuns}.json`);
  const spec: LoadSpec = {
    url: target.url,
    connections: options.connections,
    duration: options.duration,
    warmup: options.warmup,
    timeout: 10,
    headers: { 'x-api-key': ctx.rootKey },
    request: { method: request.method, paths: request.paths, body: request.body },
  };
  writeFileSync(specPath, JSON.stringify(spec));
  const load = spawnTracked('load', [join(__dirname, 'load.js'), specPath], {
    cwd: ROOT,
    captureStdout: true,
    logPath: join(RESULTS, 'load.log'),
    env: process.env,
  });
  let stdout = '';
  load.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const sampler = startRssSampler(target.child.pid);
  const finished = await waitForExit(load, (options.duration + options.warmup + 40) * 1000);
  run.peakRssKb = sampler.stop();
  if (!finished) {
    await stopChild(load, 2_000);
    run.problems.push('the load generator did not finish in time');
  } else if (load.exitCode !== 0) {
    run.problems.push(
      `the load generator failed (exit ${load.exitCode}; see bench/results/load.log)`,
    );
  } else {
    run.result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as LoadResult;
    if (run.result.responses === 0) {
      run.problems.push(
        `no response within ${options.duration} s (${options.connections} connections)`,
      );
    }
  }
  run.status = run.result && run.problems.length === 0 ? 'ok' : 'failed';
  const r = run.result;
  log(
    `  ${target.name.padEnd(8)} ${scenario.title.padEnd(30)} ${String(size).padStart(8)}  ` +
      (r
        ? `${r.requestsPerSecond.toFixed(1).padStart(9)} req/s  p50 ${fmt(r.latencyMs.p50)} ms  p99 ${fmt(r.latencyMs.p99)} ms  errors ${r.non2xx + r.errors}  (single request ${fmt(run.probeMs)} ms)`
        : 'failed') +
      (run.problems.length ? `  ! ${run.problems.join('; ')}` : ''),
  );
  return run;
}

async function benchmark(options: BenchOptions): Promise<{ runs: Run[]; info: ReportInfo }> {
  const started = Date.now();
  mkdirSync(RESULTS, { recursive: true });
  for (const file of ['service.log', 'baseline.log', 'load.log'])
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

  const service = await startService(resolved.uri, dbName);
  log(`service ready at ${service.url} (${elapsed(started)})`);
  const user = expectStatus<{ profile: { subject: string }; apiKey: string }>(
    await call(service.url, 'POST', '/admin/users', {
      key: service.adminKey,
      body: { email: 'bench@example.com', subject: 'bench-user' },
    }),
    200,
    'POST /admin/users',
  );
  const ctx: HarnessContext = {
    busyPids: () => [service.child.pid, ...databasePids],
    runTag: randomBytes(3).toString('hex'),
    subject: user.profile.subject,
    rootKey: user.apiKey,
    pageLimit: options.pageLimit,
    pick,
  };
  const runs: Run[] = [];
  const notes: string[] = [];
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
  const seedCtx = { db, serviceUrl: service.url, rootKey: ctx.rootKey };
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
  let items = await setupItems(seedCtx, ITEMS_COLLECTION);
  if (!items) {
    log('  POST /data/{c}: route not available; the baseline runs on a stand-in collection');
    notes.push(
      'The service has no data routes in this build: the baseline ran on a stand-in collection of the same documents.',
    );
    items = await setupStandInItems(seedCtx, ITEMS_COLLECTION, ctx.subject);
  }
  log(`  physical collection ${items.physical} (found by ${items.via})`);
  const itemsSeen = { name: items.name, size: 0, id: itemId };
  ctx.items = itemsSeen;
  const baseline = await startBaseline(resolved.uri, dbName, {
    [items.name]: itemTemplate(items),
  });
  const both = [service, baseline];
  ctx.busyPids = () => [service.child.pid, baseline.child.pid, ...databasePids];

  for (const size of options.itemSizes) {
    const t = Date.now();
    await seedItems(seedCtx, items, size);
    itemsSeen.size = size;
    log(`  ${size.toLocaleString('en-US')} items (seeded in ${elapsed(t)})`);
    await run('items-growth', both);
    if (size === options.mainSize) await run('items-main', both);
  }
  await run('items-write', both);

  const serviceHwmKb = memoryOf(service.child.pid)?.hwmKb;
  if (resolved.kind === 'ferretdb') {
    notes.push(
      'FerretDB v1 with SQLite evaluates most filters, sorts and counts by scanning the collection, so every number that depends on an index is far below what MongoDB gives; set MONGODB_URI to benchmark on MongoDB.',
    );
  }
  const slowSettle = runs.filter((r) => r.notQuiet);
  if (slowSettle.length) {
    notes.push(
      `The machine was still busy ${options.quietMaxMs / 1000} s after the previous run before: ${slowSettle.map((r) => `${r.target} ${r.title} (${r.size})`).join(', ')}.`,
    );
  }
  log(`\nfinished in ${elapsed(started)}`);
  return {
    runs,
    info: {
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      node: process.version,
      database,
      ...machineInfo(),
      mainSize: options.mainSize,
      queryTimeoutMs: QUERY_TIMEOUT_MS,
      serviceHwmKb,
      notes,
    },
  };
}

async function main(): Promise<void> {
  if (!existsSync(join(SERVICE_DIST, 'main.js'))) {
    process.stderr.write('dist/main.js is missing: run `npm run build` (npm run bench does it).\n');
    process.exit(1);
  }
  const options = parseOptions(process.argv.slice(2));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let outcome: { runs: Run[]; info: ReportInfo };
  try {
    outcome = await benchmark(options);
  } finally {
    await cleanup();
  }
  const { runs, info } = outcome;
  const writeSize = options.itemSizes.at(-1) ?? 0;
  const checkList = checks(runs, { ...options, growthSizes: options.itemSizes, writeSize });
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(options.out, markdown({ info, options, runs, checkList }));
  writeFileSync(
    join(RESULTS, `${options.mode}.json`),
    `${JSON.stringify({ info, options, runs, checkList }, null, 2)}\n`,
  );
  process.stdout.write(summary({ runs, checkList }));
  log(`report: ${relative(process.cwd(), options.out) || options.out}`);
  // In smoke mode the performance checks are n/a, so this fails on errors and slow runs only.
  const failed = checkList.some((c) => c.status === 'FAIL');
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
