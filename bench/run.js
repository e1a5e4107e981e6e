#!/usr/bin/env node
'use strict';
// `npm run bench`: starts the built service and a baseline server on one database, seeds data,
// drives each scenario with autocannon from a separate process, and writes BENCHMARKS.md.
// Modes: default (short), --long, --smoke (CI: tiny data, fails on any error); --large adds
// 1,000,000 items. See docs/benchmarks.md.
require('reflect-metadata');
const { randomBytes } = require('node:crypto');
const {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} = require('node:fs');
const os = require('node:os');
const { join, relative, resolve } = require('node:path');

if (!existsSync(join(__dirname, '..', 'dist', 'main.js'))) {
  process.stderr.write('dist/main.js is missing: run `npm run build` (npm run bench does it).\n');
  process.exit(1);
}
const { MongoClient } = require('mongodb');
const { loadConfig } = require('../dist/config');
const { findFreePort, resolveDatabase } = require('../dist/database');
const { call, expectStatus, routeMissing } = require('./lib/api');
const {
  spawnTracked,
  startRssSampler,
  stopAll,
  stopChild,
  memoryOf,
  waitForExit,
  waitForHttpOk,
  waitForQuiet,
  untrackedChildPids,
} = require('./lib/processes');
const { scenarios } = require('./lib/scenarios');
const {
  seedItems,
  seedProjects,
  setupItems,
  setupStandInItems,
  itemTemplate,
  itemId,
} = require('./lib/seed');
const report = require('./lib/report');

const ROOT = resolve(__dirname, '..');
const RESULTS = join(__dirname, 'results');
const ITEMS_COLLECTION = 'bench_items';
const QUERY_TIMEOUT_MS = 60_000;

const MODES = {
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

function parseOptions(argv) {
  const flags = new Set();
  const values = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (['--duration', '--connections', '--out'].includes(arg)) values[arg.slice(2)] = argv[++i];
    else if (
      ['--smoke', '--long', '--large', '--full', '--allow-missing-routes', '--help'].includes(arg)
    )
      flags.add(arg.slice(2));
    else throw new Error(`unknown option ${arg}\n${USAGE}`);
  }
  if (flags.has('help')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (flags.has('smoke') && flags.has('long'))
    throw new Error('--smoke and --long exclude each other');
  const mode = flags.has('smoke') ? 'smoke' : flags.has('long') ? 'long' : 'default';
  const options = {
    mode,
    ...MODES[mode],
    smoke: mode === 'smoke',
    allowMissingRoutes: flags.has('allow-missing-routes'),
  };
  if (flags.has('large') || flags.has('full'))
    options.itemSizes = [...options.itemSizes, 1_000_000];
  if (values.duration) options.duration = Number(values.duration);
  if (values.connections) options.connections = Number(values.connections);
  if (!(options.duration > 0) || !(options.connections >= 1))
    throw new Error(`bad --duration or --connections\n${USAGE}`);
  options.mainSize = options.itemSizes.includes(100_000) ? 100_000 : options.itemSizes.at(-1);
  options.out = values.out
    ? resolve(values.out)
    : options.smoke
      ? join(RESULTS, 'smoke.md')
      : join(ROOT, 'BENCHMARKS.md');
  options.argsLabel = argv.length ? ` -- ${argv.join(' ')}` : '';
  return options;
}

const log = (message) => process.stdout.write(`${message}\n`);
const fmt = (n) => (typeof n === 'number' ? n.toFixed(2) : '—');
const elapsed = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** A fixed-seed generator: the service and the baseline are sent the same ids. */
function pick(count, n) {
  let state = 0x9e3779b9 ^ n;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: count }, () => Math.floor(next() * n));
}

function machineInfo() {
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

async function databaseLabel(database, db) {
  let version = 'unknown';
  try {
    version = (await db.admin().command({ buildInfo: 1 })).version ?? version;
  } catch {
    // Reported as unknown.
  }
  if (database.kind === 'ferretdb') {
    const ferret = /FerretDB (\S+)/.exec(database.description)?.[1] ?? '';
    return {
      label: `FerretDB ${ferret} with the SQLite handler (reports MongoDB ${version})`,
      version,
    };
  }
  if (database.kind === 'mongodb-memory-server')
    return { label: `MongoDB ${version} (mongodb-memory-server)`, version };
  return { label: `MongoDB ${version} (MONGODB_URI)`, version };
}

/** Everything started here, for cleanup(). */
const state = {
  database: undefined,
  client: undefined,
  dbName: undefined,
  dataDir: undefined,
  tmp: undefined,
};
let cleaning;

function cleanup() {
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

function onSignal(signal) {
  log(`\n${signal}: stopping everything the benchmark started`);
  void cleanup().finally(() => process.exit(130));
}

async function startService(options, databaseUri, dbName) {
  const port = await findFreePort();
  const adminKey = randomBytes(32).toString('base64url');
  const child = spawnTracked('service', [join(ROOT, 'dist', 'main.js')], {
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
    throw new Error(`${error.message} (its output: bench/results/service.log)`);
  }
  return { name: 'service', url, child, adminKey };
}

async function startBaseline(databaseUri, dbName, collections) {
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

let loadRuns = 0;

/** One scenario against one server: probe once, let the machine settle, then the load process. */
async function runScenario(options, ctx, scenario, target) {
  const request = scenario.request({ ...ctx, target: target.name });
  const size =
    scenario.phase === 'projects'
      ? ctx.projects.count
      : scenario.phase === 'other'
        ? 0
        : ctx.items.size;
  const run = {
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

  const probe = await call(target.url, request.method, request.paths[0].replaceAll('%SEQ%', '0'), {
    key: ctx.rootKey,
    rawBody: request.body?.replaceAll('%SEQ%', '0'),
  });
  if (routeMissing(probe)) return { ...run, status: 'unavailable' };
  if (probe.status < 200 || probe.status > 299) {
    run.problems.push(
      `probe answered ${probe.status} ${probe.body?.code ?? ''} ${probe.body?.detail ?? probe.text.slice(0, 200)}`.trim(),
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

  const specPath = join(state.tmp, `load-${++loadRuns}.json`);
  writeFileSync(
    specPath,
    JSON.stringify({
      url: target.url,
      connections: options.connections,
      duration: options.duration,
      warmup: options.warmup,
      timeout: 10,
      headers: { 'x-api-key': ctx.rootKey },
      request: { method: request.method, paths: request.paths, body: request.body },
    }),
  );
  const load = spawnTracked('load', [join(__dirname, 'load.js'), specPath], {
    cwd: ROOT,
    captureStdout: true,
    logPath: join(RESULTS, 'load.log'),
    env: process.env,
  });
  let stdout = '';
  load.stdout.on('data', (chunk) => (stdout += chunk));
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
    run.result = JSON.parse(stdout.trim().split('\n').at(-1));
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

async function benchmark(options) {
  const started = Date.now();
  mkdirSync(RESULTS, { recursive: true });
  for (const file of ['service.log', 'baseline.log', 'load.log'])
    rmSync(join(RESULTS, file), { force: true });
  state.tmp = mkdtempSync(join(os.tmpdir(), 'pds-bench-'));
  state.dataDir = join(state.tmp, 'data');

  // The database the project resolves (MONGODB_URI, else an embedded one), started once here.
  const config = loadConfig({ ...process.env, NODE_ENV: 'test' });
  state.database = await resolveDatabase({ ...config.database, dataDir: state.dataDir, log });
  // An embedded server is a child of this process (external ones cannot be watched).
  const databasePids = untrackedChildPids();
  state.dbName = `pds_bench_${randomBytes(4).toString('hex')}`;
  state.client = new MongoClient(state.database.uri);
  await state.client.connect();
  const db = state.client.db(state.dbName);
  const database = await databaseLabel(state.database, db);

  const service = await startService(options, state.database.uri, state.dbName);
  log(`service ready at ${service.url} (${elapsed(started)})`);
  const user = expectStatus(
    await call(service.url, 'POST', '/admin/users', {
      key: service.adminKey,
      body: { email: 'bench@example.com', subject: 'bench-user' },
    }),
    200,
    'POST /admin/users',
  );
  const ctx = {
    busyPids: () => [service.child.pid, ...databasePids],
    runTag: randomBytes(3).toString('hex'),
    subject: user.profile.subject,
    rootKey: user.apiKey,
    pageLimit: options.pageLimit,
    pick,
  };
  const runs = [];
  const notes = [];
  const run = async (phase, targets) => {
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
  const projects = await seedProjects(
    { db, serviceUrl: service.url, rootKey: ctx.rootKey },
    options.projects,
  );
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
  const seedCtx = { db, serviceUrl: service.url, rootKey: ctx.rootKey };
  let items = await setupItems(seedCtx, ITEMS_COLLECTION);
  if (!items) {
    log('  POST /data/{c}: route not available; the baseline runs on a stand-in collection');
    notes.push(
      'The service has no data routes in this build: the baseline ran on a stand-in collection of the same documents.',
    );
    items = await setupStandInItems(seedCtx, ITEMS_COLLECTION, ctx.subject);
  }
  log(`  physical collection ${items.physical} (found by ${items.via})`);
  ctx.items = { name: items.name, size: 0, id: itemId };
  const baseline = await startBaseline(state.database.uri, state.dbName, {
    [items.name]: itemTemplate(items),
  });
  const both = [service, baseline];
  ctx.busyPids = () => [service.child.pid, baseline.child.pid, ...databasePids];

  for (const size of options.itemSizes) {
    const t = Date.now();
    await seedItems(seedCtx, items, size);
    ctx.items.size = size;
    log(`  ${size.toLocaleString('en-US')} items (seeded in ${elapsed(t)})`);
    await run('items-growth', both);
    if (size === options.mainSize) await run('items-main', both);
  }
  await run('items-write', both);

  const serviceHwmKb = memoryOf(service.child.pid)?.hwmKb;
  if (state.database.kind === 'ferretdb') {
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
      database: database.label,
      ...machineInfo(),
      mainSize: options.mainSize,
      queryTimeoutMs: QUERY_TIMEOUT_MS,
      serviceHwmKb,
      notes,
    },
  };
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let outcome;
  try {
    outcome = await benchmark(options);
  } finally {
    await cleanup();
  }
  const { runs, info } = outcome;
  const writeSize = options.itemSizes.at(-1);
  const checkList = report.checks(runs, { ...options, growthSizes: options.itemSizes, writeSize });
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(options.out, report.markdown({ info, options, runs, checkList }));
  writeFileSync(
    join(RESULTS, `${options.mode}.json`),
    `${JSON.stringify({ info, options, runs, checkList }, null, 2)}\n`,
  );
  process.stdout.write(report.summary({ runs, checkList }));
  log(`report: ${relative(process.cwd(), options.out) || options.out}`);
  // In smoke mode the performance checks are n/a, so this fails on errors and slow runs only.
  const failed = checkList.some((c) => c.status === 'FAIL');
  process.exit(failed ? 1 : 0);
}

main().catch(async (error) => {
  // Configuration and database problems carry their own explanation; anything else needs the stack.
  const expected = ['ConfigValidationError', 'DatabaseUnavailableError'].includes(error?.name);
  process.stderr.write(
    `bench failed: ${expected ? error.message : (error?.stack ?? String(error))}\n`,
  );
  await cleanup();
  process.exit(1);
});
