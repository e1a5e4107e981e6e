// The command line of `npm run bench`: the modes and their settings, and the options.
import { join, resolve } from 'node:path';
import { RESULTS, ROOT } from './paths';
import type { BenchOptions, Mode } from './types';

type ModeSettings = Pick<
  BenchOptions,
  | 'itemSizes'
  | 'projects'
  | 'pageLimit'
  | 'duration'
  | 'warmup'
  | 'connections'
  | 'quietMaxMs'
  | 'compare'
  | 'transferItems'
  | 'files'
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
    compare: { rounds: 1, seconds: 1, warmup: 0 },
    transferItems: 2_000,
    files: { smallFiles: 3, largeMiB: 4, rounds: 1 },
  },
  default: {
    itemSizes: [10_000, 100_000],
    projects: 100_000,
    pageLimit: 100,
    duration: 3,
    warmup: 0,
    connections: 10,
    quietMaxMs: 30_000,
    compare: { rounds: 10, seconds: 1, warmup: 2 },
    transferItems: 100_000,
    files: { smallFiles: 20, largeMiB: 50, rounds: 3 },
  },
  long: {
    itemSizes: [10_000, 100_000],
    projects: 100_000,
    pageLimit: 100,
    duration: 20,
    warmup: 3,
    connections: 10,
    quietMaxMs: 60_000,
    compare: { rounds: 20, seconds: 3, warmup: 3 },
    transferItems: 100_000,
    files: { smallFiles: 50, largeMiB: 50, rounds: 5 },
  },
};

const USAGE = `Usage: npm run bench [-- options]
  (no option)   short run, 3 s per scenario, 10 connections; comparisons in 10 rounds of 1 s;
                writes BENCHMARKS.md
  --long        20 s per scenario after a 3 s warm-up; comparisons in 20 rounds of 3 s
  --large       also 1,000,000 items (alias --full)
  --smoke       tiny data, 1 s per scenario and comparison variant; writes bench/results/smoke.md;
                exits 1 on any error
  --allow-missing-routes   report routes that answer 404 ROUTE_NOT_FOUND, and features a comparison
                           does not find (metrics, Idempotency-Key, ETag), as "not available"
                           instead of failing (for a service built without some modules)
  --comparisons-only   run the feature comparisons and the SSE fan-out only (no scenario, no
                       projects, no large data)
  --fan-out-only       run the SSE fan-out only
  --live-only          run the live queries only (100 filtered and 100 unfiltered streams, 1,000
                       changes; 5 streams and 16 changes with --smoke)
  --transfer-only      run the export and import only (100,000 items; 2,000 with --smoke)
  --cost-only          run the service-vs-baseline cost comparisons only (CPU and database commands
                       per request next to the baseline and the old baseline; the goals of
                       GET by _id and POST)
  --only IDS           run only the comparisons with these ids (comma-separated, as in
                       bench/lib/comparisons.ts: cost-item-by-id,cost-item-post,metrics,…, and
                       clusters-get,clusters-post); nothing else of the comparisons run
  --schema-only        run the JSON Schema comparison only (POST with a 20-property schema vs none),
                       then the /health latency while hostile writes are validated
  --health-only        run the /health latency while hostile writes are validated only (POSTs of
                       90,000 and 10,000 numbers under uniqueItems, a check stopped at
                       SCHEMA_CHECK_MAX_MS, 90,000 numbers without a schema)
  --files-only         run the file uploads and downloads only (POST /files and
                       GET /files/{id}/content vs the driver's GridFSBucket: 20 files of 1 MiB and
                       one of 50 MiB, 3 rounds; 3 of 1 MiB and one of 4 MiB, 1 round with --smoke;
                       50 files and 5 rounds with --long)
  --moves-only         run the tenant moves only (move time against tenant size and write rate)
  --duration S, --connections N, --rounds N   override the mode's values (--rounds: comparison rounds)
  --round-seconds S    seconds of load per comparison variant and round (default 1; 3 with --long)
  --transfer-items N   items the export and import move (default 100,000; 2,000 with --smoke)
  --out FILE    where to write the Markdown report (default: BENCHMARKS.md; with --smoke,
                --comparisons-only, --cost-only, --fan-out-only, --live-only, --transfer-only,
                --schema-only, --health-only, --files-only or --moves-only bench/results/<smoke|
                comparisons-MODE|cost-MODE|fan-out-MODE|live-MODE|transfer-MODE|schema-MODE|
                health-MODE|files-MODE|moves-MODE>.md)`;

const VALUE_OPTIONS = [
  '--duration',
  '--connections',
  '--rounds',
  '--round-seconds',
  '--transfer-items',
  '--out',
  '--only',
];
const FLAGS = [
  '--smoke',
  '--long',
  '--large',
  '--full',
  '--comparisons-only',
  '--cost-only',
  '--fan-out-only',
  '--live-only',
  '--transfer-only',
  '--schema-only',
  '--health-only',
  '--files-only',
  '--moves-only',
  '--allow-missing-routes',
  '--help',
];

export function parseOptions(argv: string[]): BenchOptions {
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
  if (values.rounds) settings.compare = { ...settings.compare, rounds: Number(values.rounds) };
  if (values['round-seconds'])
    settings.compare = { ...settings.compare, seconds: Number(values['round-seconds']) };
  if (values['transfer-items']) settings.transferItems = Number(values['transfer-items']);
  if (
    !(settings.duration > 0) ||
    !(settings.connections >= 1) ||
    !Number.isInteger(settings.compare.rounds) ||
    settings.compare.rounds < 1 ||
    !(settings.compare.seconds > 0) ||
    !Number.isInteger(settings.transferItems) ||
    settings.transferItems < 1
  )
    throw new Error(
      `bad --duration, --connections, --rounds, --round-seconds or --transfer-items\n${USAGE}`,
    );
  const smoke = mode === 'smoke';
  const fanOutOnly = flags.has('fan-out-only');
  const liveOnly = flags.has('live-only');
  const transferOnly = flags.has('transfer-only');
  const schemaOnly = flags.has('schema-only');
  const healthOnly = flags.has('health-only');
  const costOnly = flags.has('cost-only');
  const filesOnly = flags.has('files-only');
  const movesOnly = flags.has('moves-only');
  if (
    [
      flags.has('comparisons-only'),
      costOnly,
      fanOutOnly,
      liveOnly,
      transferOnly,
      schemaOnly,
      healthOnly,
      filesOnly,
      movesOnly,
    ].filter(Boolean).length > 1
  )
    throw new Error(
      '--comparisons-only, --cost-only, --fan-out-only, --live-only, --transfer-only, --schema-only, --health-only, --files-only and --moves-only exclude each other',
    );
  const comparisonsOnly =
    flags.has('comparisons-only') ||
    costOnly ||
    fanOutOnly ||
    liveOnly ||
    transferOnly ||
    schemaOnly ||
    healthOnly ||
    filesOnly ||
    movesOnly;
  // Only a full default or --long run replaces BENCHMARKS.md and <mode>.json.
  const partial = smoke || comparisonsOnly;
  const name = fanOutOnly
    ? `fan-out-${mode}`
    : liveOnly
      ? `live-${mode}`
      : transferOnly
        ? `transfer-${mode}`
        : schemaOnly
          ? `schema-${mode}`
          : healthOnly
            ? `health-${mode}`
            : filesOnly
              ? `files-${mode}`
              : movesOnly
                ? `moves-${mode}`
                : costOnly
                  ? `cost-${mode}`
                  : comparisonsOnly
                    ? `comparisons-${mode}`
                    : mode;
  return {
    mode,
    ...settings,
    smoke,
    allowMissingRoutes: flags.has('allow-missing-routes'),
    comparisonsOnly,
    fanOutOnly,
    liveOnly,
    transferOnly,
    schemaOnly,
    healthOnly,
    costOnly,
    filesOnly,
    movesOnly,
    only: values.only ? values.only.split(',').filter(Boolean) : undefined,
    mainSize: settings.itemSizes.includes(100_000) ? 100_000 : (settings.itemSizes.at(-1) ?? 0),
    out: values.out
      ? resolve(values.out)
      : partial
        ? join(RESULTS, `${name}.md`)
        : join(ROOT, 'BENCHMARKS.md'),
    json: join(RESULTS, `${name}.json`),
    argsLabel: argv.length ? ` -- ${argv.join(' ')}` : '',
  };
}
