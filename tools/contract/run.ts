// `npm run test:contract`: fuzzes the running service against its own OpenAPI document with a
// pinned Schemathesis. Starts the built service (dist/main.js) on the database the tests use
// (MONGODB_URI, else an embedded one) with a fresh database, creates root, team, sub and operator
// principals and data to address, runs Schemathesis once per principal on the operations it may
// call (every check, positive and negative data, links-driven stateful phase, fixed seed), prints
// a summary and exits 1 on any failure. Everything it starts is stopped, everything it writes
// (Schemathesis's own state, reports; the database's files in memory where the machine has
// /dev/shm) lives in temporary directories it removes.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import {
  DatabaseUnavailableError,
  loadDatabaseSettings,
  removeThrowawayDataDir,
  resolveDatabase,
  throwawayDataDir,
  type ResolvedDatabase,
} from '../dev-database';
import { ensureSchemathesis, type Schemathesis } from './python';
import { clean, readResult, summaryTable, type RunResult } from './report';
import { seed, type PrincipalKind, type Principals } from './seed';
import { ensureBuilt, startService, type RunningService } from './service';

/** The repository; this file runs from dist-dev/tools/contract/. */
const ROOT = resolve(__dirname, '..', '..', '..');
/** Configuration files read at run time, beside this file's source. */
const CONFIG_DIR = join(ROOT, 'tools', 'contract');

interface PrincipalRun {
  kind: PrincipalKind;
  /** The operations the principal may call (the others answer 403 to it): a path pattern… */
  paths: string;
  /** …less these operationIds. */
  notOperations?: string[];
  /**
   * Examples per operation in the fuzzing phase; bounds the run's duration. The coverage phase's
   * cases (the boundary and negative values the document allows, per parameter and member) do
   * not depend on it. Halved for the team, sub and operator runs when CI had to fit in 20
   * minutes; every defect the contract run has found is kept as a regression in
   * contract-defects.e2e-spec.ts, which runs on every CI run. The root run keeps 40: with 20, no
   * case of PUT /data/{collection}/{indexName}/{indexValue} got past X-Team (half of them send a
   * random team id, answered 403), which Schemathesis reports as missing authentication.
   */
  maxExamples: number;
}

/**
 * Root runs after team and sub: it may delete what they address (the sub key's items are its
 * own). The operator runs last: it erases accounts and teams, the seeded ones among them (their
 * names are in the dictionaries), after which the other principals' keys no longer work.
 */
/*
 * GET /file-links/{token} is not fuzzed: a link is an HMAC the fuzzer cannot make, so every case
 * would be the same 403 (links are tested end to end in test/e2e/files.e2e-spec.ts).
 */
/** The routes of a collection's rules and search configuration: root and team keys only. */
const COLLECTION_RULES = [
  'putDataSchema',
  'getDataSchema',
  'deleteDataSchema',
  'listDataSchemaViolations',
  'putDataExpiry',
  'getDataExpiry',
  'deleteDataExpiry',
  'putDataAccess',
  'getDataAccess',
  'deleteDataAccess',
  'putDataSearch',
  'getDataSearch',
  'deleteDataSearch',
];

const RUNS: readonly PrincipalRun[] = [
  {
    kind: 'team',
    paths: '^/(project|data|events|me|export|import|files)(/|$)',
    // An event stream never ends by itself: tested end to end (events.e2e-spec.ts). An account
    // is exported by its user's root key only.
    notOperations: ['streamEvents', 'exportMyAccount'],
    maxExamples: 10,
  },
  {
    kind: 'sub',
    paths: '^/(profile|profiles|data|events|me|export|import|files)(/|$)',
    // Sub profiles are created and deleted, accounts erased and exported, indexes and
    // collection statistics read, collection rules (schema, expiry, access) kept, and the tenant's
    // usage read, by root and team keys only.
    notOperations: [
      'getMyUsage',
      'createSubProfile',
      'deleteSubProfile',
      'eraseOwnAccount',
      'exportMyAccount',
      'streamEvents',
      'getDataCollectionStats',
      'listDataIndexes',
      'createDataIndex',
      'deleteDataIndex',
      ...COLLECTION_RULES,
    ],
    maxExamples: 10,
  },
  {
    kind: 'root',
    paths: '^/(profile|profiles|project|data|api-keys|teams|events|me|export|import|files)(/|$)',
    // Collection rules are the team run's to fuzz (it runs first, in a namespace of its own): a
    // schema or an expiry fuzzed onto the seeded collections would refuse or hide every item the
    // root run writes and reads after it.
    notOperations: ['streamEvents', 'putDataSchema', 'putDataExpiry'],
    maxExamples: 40,
  },
  {
    kind: 'operator',
    paths: '^/(admin|health|me)(/|$)',
    // The operator has no namespace: its branches and its usage are a 403 (me.e2e-spec.ts,
    // usage.e2e-spec.ts), not a contract.
    notOperations: ['exportMyAccount', 'listBranches', 'getMyUsage'],
    maxExamples: 20,
  },
];

const USAGE = `Usage: npm run test:contract [-- options]
  --principal KIND   only this principal (operator, root, team, sub); repeatable
  --max-examples N   examples per operation for every principal (default: per principal)
  --keep             keep the working directory (reports, service log) and print its path`;

interface Options {
  runs: PrincipalRun[];
  keep: boolean;
}

function parseOptions(argv: string[]): Options {
  const kinds = new Set<string>();
  let maxExamples: number | undefined;
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--principal') kinds.add(argv[++i] ?? '');
    else if (arg === '--max-examples') maxExamples = Number(argv[++i]);
    else if (arg === '--keep') keep = true;
    else throw new Error(`unknown option ${arg}\n${USAGE}`);
  }
  const unknown = [...kinds].filter((kind) => !RUNS.some((run) => run.kind === kind));
  if (unknown.length > 0) throw new Error(`unknown principal ${unknown.join(', ')}\n${USAGE}`);
  if (maxExamples !== undefined && !(Number.isInteger(maxExamples) && maxExamples >= 1))
    throw new Error(`--max-examples needs a positive integer\n${USAGE}`);
  return {
    runs: RUNS.filter((run) => kinds.size === 0 || kinds.has(run.kind)).map((run) => ({
      ...run,
      maxExamples: maxExamples ?? run.maxExamples,
    })),
    keep,
  };
}

const log = (message: string): void => {
  process.stdout.write(`${message}\n`);
};

/** What has to be undone however the run ends. */
const state: {
  work?: string;
  /** The database's files (in memory where the machine allows: throwawayDataDir). */
  dataDir?: string;
  keep: boolean;
  database?: ResolvedDatabase;
  databaseName?: string;
  service?: RunningService;
  fuzzer?: ChildProcess;
  interrupted: boolean;
} = { keep: false, interrupted: false };

async function cleanUp(): Promise<void> {
  if (state.fuzzer && state.fuzzer.exitCode === null && state.fuzzer.signalCode === null) {
    state.fuzzer.kill('SIGKILL');
  }
  await state.service?.stop().catch(() => undefined);
  if (state.database && state.databaseName) {
    // On a MONGODB_URI server the run's database would outlive it; an embedded one goes anyway.
    await dropDatabase(state.database.uri, state.databaseName).catch(() => undefined);
  }
  await state.database?.stop().catch(() => undefined);
  if (state.work && !state.keep) rmSync(state.work, { recursive: true, force: true });
  if (state.dataDir && !state.keep) removeThrowawayDataDir(state.dataDir);
}

async function dropDatabase(uri: string, name: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

function runSchemathesis(
  schemathesis: Schemathesis,
  service: RunningService,
  principals: Principals,
  teamId: string,
  fileIds: string[],
  run: PrincipalRun,
  work: string,
): Promise<RunResult> {
  const report = join(work, `report-${run.kind}.json`);
  const exclusionsLog = join(work, `excluded-${run.kind}.jsonl`);
  const args = [
    '-m',
    'schemathesis.cli',
    '--config-file',
    join(CONFIG_DIR, 'schemathesis.toml'),
    '--no-color',
    'run',
    `${service.url}/docs-json`,
    '--include-path-regex',
    run.paths,
    ...(run.notOperations ?? []).flatMap((id) => ['--exclude-operation-id', id]),
    '--max-examples',
    String(run.maxExamples),
    '--report',
    'json',
    '--report-json-path',
    report,
  ];
  log(`\n== ${run.kind}: operations ${run.paths}, ${run.maxExamples} examples per operation`);
  const started = Date.now();
  return new Promise((done, fail) => {
    // Schemathesis keeps state in its working directory (.hypothesis, .schemathesis): the
    // temporary directory, never the repository.
    const child = spawn(schemathesis.python, args, {
      cwd: work,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        ...process.env,
        CONTRACT_API_KEY: principals[run.kind],
        CONTRACT_PRINCIPAL: run.kind,
        CONTRACT_TEAM_ID: teamId,
        CONTRACT_FILE_ID_ROOT: fileIds[0] ?? '',
        CONTRACT_FILE_ID_TEAM: fileIds[1] ?? '',
        CONTRACT_FILE_ID_SUB: fileIds[2] ?? '',
        SCHEMATHESIS_HOOKS: join(CONFIG_DIR, 'exclusions.py'),
        CONTRACT_EXCLUSIONS_LOG: exclusionsLog,
      },
    });
    state.fuzzer = child;
    child.once('error', fail);
    child.once('exit', (code, signal) => {
      state.fuzzer = undefined;
      const exitCode = code ?? (signal ? 128 : 1);
      done(readResult(run.kind, exitCode, report, exclusionsLog, (Date.now() - started) / 1000));
    });
  });
}

/** The service's error lines (every 5xx is logged with its traceId), for a failed run. */
function serviceErrors(logPath: string): string[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-20);
}

async function main(): Promise<boolean> {
  const options = parseOptions(process.argv.slice(2));
  state.keep = options.keep;
  const started = Date.now();

  ensureBuilt(ROOT, log);
  const settings = await loadDatabaseSettings();
  const schemathesis = await ensureSchemathesis(
    settings.cacheDir,
    join(CONFIG_DIR, 'requirements.txt'),
    log,
  );
  log(
    `schemathesis ${schemathesis.version} on Python ${schemathesis.interpreter.version} (${schemathesis.interpreter.via})`,
  );

  const work = mkdtempSync(join(tmpdir(), 'pds-contract-'));
  state.work = work;
  state.dataDir = throwawayDataDir('pds-contract-');
  state.database = await resolveDatabase({ ...settings, dataDir: state.dataDir, log });
  const serviceLog = join(work, 'service.log');
  state.databaseName = `pds_contract_${randomBytes(4).toString('hex')}`;
  const service = await startService({
    root: ROOT,
    databaseUri: state.database.uri,
    databaseName: state.databaseName,
    logPath: serviceLog,
  });
  state.service = service;
  log(`service: ${service.url} on ${state.database.description}`);
  const { principals, teamId, fileIds } = await seed(service.url, service.adminKey);

  const results: RunResult[] = [];
  for (const run of options.runs) {
    const result = await runSchemathesis(
      schemathesis,
      service,
      principals,
      teamId,
      fileIds,
      run,
      work,
    );
    if (state.interrupted) return false;
    results.push(result);
  }

  const passed = results.every(clean);
  log(
    `\n== contract summary (Schemathesis ${schemathesis.version}, Python ${schemathesis.interpreter.version}, seed ${results[0]?.seed ?? '?'})`,
  );
  log(summaryTable(results));
  if (!passed) {
    const errors = serviceErrors(serviceLog);
    if (errors.length > 0) log(`\nservice errors (last ${errors.length}):\n${errors.join('\n')}`);
  }
  log(
    `\ncontract: ${passed ? 'clean' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s` +
      (options.keep ? ` (working directory kept: ${work})` : ''),
  );
  return passed;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    state.interrupted = true;
    void cleanUp().finally(() => process.exit(130));
  });
}

main()
  .then(
    async (passed) => {
      await cleanUp();
      process.exit(state.interrupted ? 130 : passed ? 0 : 1);
    },
    async (error: unknown) => {
      await cleanUp();
      // Stopping the service under a run that was interrupted makes it fail; that is no error.
      if (state.interrupted) process.exit(130);
      process.stderr.write(
        `${error instanceof DatabaseUnavailableError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  )
  .catch(() => process.exit(1));
