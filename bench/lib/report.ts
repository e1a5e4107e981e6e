// Turns the runs into BENCHMARKS.md (tables per section plus the checks) and a stdout summary.
import { basename } from 'node:path';
import { cpuMsPerResponse } from './load-runner';
import type { BenchOptions, Check, ComparisonRun, ReportInfo, Run } from './types';

const RATIO_MIN = 0.7;
const GROWTH_MAX = 1.5;

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const rate = (n: number): string => (n >= 100 ? int(n) : n.toFixed(1));
const ms = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : n < 10 ? n.toFixed(2) : n.toFixed(1);
const mib = (kb: number | undefined): string => (kb ? (kb / 1024).toFixed(0) : '—');
const cpuMsOf = (run: Run | undefined): number | undefined =>
  run?.result && cpuMsPerResponse(run.result.cpu.target, run.result.responses);
const cpuMs = (run: Run | undefined): string => cpuMsOf(run)?.toFixed(3) ?? '—';
/** Database commands per response (background work included). */
const commands = (run: Run | undefined): string =>
  run?.result?.commands !== undefined && run.result.served
    ? (run.result.commands / run.result.served).toFixed(2)
    : '—';

function errorsOf(run: Run): number {
  return run.result ? run.result.unexpected + run.result.errors : 0;
}

function find(runs: Run[], scenario: string, target: string, size?: number): Run | undefined {
  return runs.find(
    (r) =>
      r.scenario === scenario && r.target === target && (size === undefined || r.size === size),
  );
}

function dataLabel(run: Run): string {
  if (run.phase === 'projects')
    return `${int(run.size)} projects${run.page ? `, page ${int(run.page)}` : ''}`;
  if (run.phase === 'other') return '—';
  return `${int(run.size)} items${run.page ? `, page ${int(run.page)}` : ''}`;
}

function serviceCells(run: Run | undefined): string[] {
  if (!run) return ['—', '—', '—', '—', '—', '—', '—', '—'];
  if (run.status === 'unavailable')
    return ['route not available', '—', '—', '—', '—', '—', '—', '—'];
  if (!run.result) return ['failed', '—', '—', ms(run.probeMs), '—', '—', '—', '—'];
  const { result } = run;
  const errors = `${errorsOf(run)}${run.problems.length > 0 ? ' ⚠' : ''}`;
  return [
    rate(result.requestsPerSecond),
    cpuMs(run),
    commands(run),
    ms(run.probeMs),
    ms(result.latencyMs.p50),
    ms(result.latencyMs.p99),
    errors,
    mib(run.peakRssKb),
  ];
}

function ratioOf(service: Run | undefined, baseline: Run | undefined): number | undefined {
  if (!service?.result || !baseline?.result || baseline.result.requestsPerSecond === 0)
    return undefined;
  return service.result.requestsPerSecond / baseline.result.requestsPerSecond;
}

function table(runs: Run[], rows: Run[]): string {
  const lines = [
    '| Scenario | Route | Data | req/s | CPU ms/req | DB cmds/req | single ms | p50 ms | p99 ms | errors | peak RSS MiB | baseline req/s | baseline CPU ms/req | baseline DB cmds/req | baseline single ms | baseline p50 ms | baseline errors | req/s ratio | CPU ratio |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const service of rows) {
    const baseline = find(runs, service.scenario, 'baseline', service.size);
    const ratio = ratioOf(service, baseline);
    const serviceCpu = cpuMsOf(service);
    const baselineCpu = cpuMsOf(baseline);
    const cpuRatio =
      serviceCpu !== undefined && baselineCpu ? (serviceCpu / baselineCpu).toFixed(2) : '—';
    const base = !baseline
      ? ['—', '—', '—', '—', '—', '—']
      : baseline.result
        ? [
            rate(baseline.result.requestsPerSecond),
            cpuMs(baseline),
            commands(baseline),
            ms(baseline.probeMs),
            ms(baseline.result.latencyMs.p50),
            String(errorsOf(baseline)),
          ]
        : ['failed', '—', '—', ms(baseline.probeMs), '—', '—'];
    lines.push(
      `| ${service.title} | \`${service.route}\` | ${dataLabel(service)} | ${serviceCells(service).join(' | ')} | ${base.join(' | ')} | ${ratio === undefined ? '—' : ratio.toFixed(2)} | ${cpuRatio} |`,
    );
  }
  return lines.join('\n');
}

/**
 * Compares the runs' mean latencies; when a run was too slow to load (or failed), the probes'
 * single-request latencies, so that a slow database still gets an answer.
 */
function latencyRatioCheck(name: string, deep: Run | undefined, first: Run | undefined): Check {
  const deepLoad = deep?.result;
  const firstLoad = first?.result;
  let compared: { a: number; b: number; label: string; throughput: string } | undefined;
  if (deepLoad?.latencyMs.mean && firstLoad?.latencyMs.mean) {
    compared = {
      a: deepLoad.latencyMs.mean,
      b: firstLoad.latencyMs.mean,
      label: 'mean',
      throughput: `; ${rate(deepLoad.requestsPerSecond)} vs ${rate(firstLoad.requestsPerSecond)} req/s`,
    };
  } else if (deep?.probeMs && first?.probeMs) {
    compared = { a: deep.probeMs, b: first.probeMs, label: 'single request', throughput: '' };
  }
  if (!compared) return { name, status: 'n/a', detail: 'not measured' };
  const { a, b, label, throughput } = compared;
  const ratio = a / b;
  return {
    name,
    status: ratio <= GROWTH_MAX ? 'PASS' : 'FAIL',
    detail:
      `${label} ${ms(a)} ms vs ${ms(b)} ms = ${ratio.toFixed(2)}x (limit ${GROWTH_MAX}x)` +
      throughput,
  };
}

function throughputRatioCheck(
  name: string,
  service: Run | undefined,
  baseline: Run | undefined,
  size?: number,
): Check {
  const ratio = ratioOf(service, baseline);
  if (ratio === undefined || !service?.result || !baseline?.result)
    return { name, status: 'n/a', detail: 'not measured' };
  const at = size === undefined ? '' : ` at ${size.toLocaleString('en-US')} items`;
  return {
    name,
    status: ratio >= RATIO_MIN ? 'PASS' : 'FAIL',
    detail: `${rate(service.result.requestsPerSecond)} vs ${rate(baseline.result.requestsPerSecond)} req/s${at} = ${ratio.toFixed(2)} (at least ${RATIO_MIN})`,
  };
}

export interface CheckOptions {
  smoke: boolean;
  allowMissingRoutes: boolean;
  mainSize: number;
  growthSizes: number[];
  writeSize: number;
}

/** Every check of the brief; in smoke mode only the error check counts (tiny data, 1 s runs). */
export function checks(
  runs: Run[],
  comparisonRuns: ComparisonRun[],
  { smoke, allowMissingRoutes, mainSize, growthSizes, writeSize }: CheckOptions,
): Check[] {
  const service = (id: string, size?: number): Run | undefined => find(runs, id, 'service', size);
  const baseline = (id: string, size?: number): Run | undefined => find(runs, id, 'baseline', size);
  // The first data size at which both sides were load-tested (a slow database can leave the
  // largest size with single-request timings only); the check's detail names the size.
  const loadedPair = (id: string, sizes: number[]): [Run | undefined, Run | undefined, number?] => {
    for (const size of sizes) {
      const pair = [service(id, size), baseline(id, size)] as const;
      if (ratioOf(...pair) !== undefined) return [...pair, size];
    }
    return [service(id, sizes[0]), baseline(id, sizes[0])];
  };
  const performance = [
    throughputRatioCheck(
      'GET item by _id: service ≥ 0.7 × baseline',
      ...loadedPair('item-by-id', [mainSize, ...[...growthSizes].reverse()]),
    ),
    throughputRatioCheck(
      'POST item: service ≥ 0.7 × baseline',
      service('item-post', writeSize),
      baseline('item-post', writeSize),
    ),
    latencyRatioCheck(
      'Projects keyset: page 1,000 within 1.5x of page 1',
      service('projects-page-deep'),
      service('projects-page-1'),
    ),
    latencyRatioCheck(
      'Items keyset: page 1,000 within 1.5x of page 1',
      service('items-page-deep', mainSize),
      service('items-page-1', mainSize),
    ),
    growthSizes.includes(10_000) && growthSizes.includes(100_000)
      ? latencyRatioCheck(
          'Unfiltered count: 100,000 items within 1.5x of 10,000',
          service('item-count', 100_000),
          service('item-count', 10_000),
        )
      : {
          name: 'Unfiltered count: 100,000 items within 1.5x of 10,000',
          status: 'n/a' as const,
          detail: 'needs both sizes',
        },
  ];
  if (smoke)
    for (const check of performance)
      Object.assign(check, { status: 'n/a', detail: `smoke run (${check.detail})` });

  // A run too slow to load answered correctly, just slowly: it fails the load-test check below,
  // not the error check.
  const slow = runs.filter((r) => r.tooSlow);
  const bad = runs.filter(
    (r) => !r.tooSlow && (errorsOf(r) > 0 || r.problems.length > 0 || r.status === 'failed'),
  );
  const missing = runs.filter((r) => r.status === 'unavailable');
  const variants = comparisonRuns.flatMap((c) =>
    c.variants.map((v) => ({ ...v, title: `${c.title}: ${v.label}` })),
  );
  const slowVariants = variants.filter((v) => v.tooSlow);
  const badVariants = variants.filter((v) => !v.tooSlow && v.status !== 'ok');
  const missingFeatures = comparisonRuns.filter((c) => c.missing);
  const problems = [
    ...bad.map(
      (r) =>
        `${r.target} ${r.title} (${dataLabel(r)}): ` +
        [
          ...(r.result
            ? [`${errorsOf(r)} errors, status codes ${JSON.stringify(r.result.statusCodes)}`]
            : []),
          ...r.problems,
        ].join('; '),
    ),
    ...(allowMissingRoutes ? [] : missing.map((r) => `${r.title}: route not available`)),
    ...badVariants.map((v) => `${v.target} ${v.title}: ${v.problems.join('; ') || 'failed'}`),
    ...(allowMissingRoutes
      ? []
      : missingFeatures.map((c) => `${c.title}: not available (${c.missing})`)),
  ];
  const allowed = [
    ...missing.map((r) => `${r.title} (route not available)`),
    ...missingFeatures.map((c) => `${c.title} (${c.missing})`),
  ];
  const responses =
    runs.reduce((sum, r) => sum + (r.result?.responses ?? 0), 0) +
    variants.reduce((sum, v) => sum + v.rounds.reduce((n, l) => n + l.responses, 0), 0);
  const errorCheck: Check = {
    name: '0 errors and 0 unexpected statuses in every run (service and baseline)',
    status: problems.length === 0 ? 'PASS' : 'FAIL',
    detail:
      problems.length === 0
        ? `${runs.filter((r) => r.result).length} runs and ${variants.reduce((n, v) => n + v.rounds.length, 0)} comparison rounds, ${int(responses)} responses` +
          (allowed.length ? `; not available (allowed): ${allowed.join(', ')}` : '')
        : problems.join('<br>'),
  };
  const loadCheck: Check = {
    name: 'every scenario answered fast enough to be load-tested',
    // A smoke run's 1 s runs on tiny data say nothing about speed: a busy machine must not fail it.
    status: slow.length + slowVariants.length === 0 ? 'PASS' : smoke ? 'n/a' : 'FAIL',
    detail:
      slow.length + slowVariants.length === 0
        ? 'all runs loaded'
        : [
            ...slow.map(
              (r) => `${r.target} ${r.title} (${dataLabel(r)}): ${r.problems.join('; ')}`,
            ),
            ...slowVariants.map((v) => `${v.target} ${v.title}: ${v.problems.join('; ')}`),
          ].join('<br>'),
  };
  return [...performance, errorCheck, loadCheck];
}

export interface Report {
  info: ReportInfo;
  options: BenchOptions;
  runs: Run[];
  checkList: Check[];
  /** The feature comparisons' section, in Markdown. */
  comparisons: string;
}

export function markdown({ info, options, runs, checkList, comparisons }: Report): string {
  const svc = runs.filter((r) => r.target === 'service');
  const phase = (...names: Run['phase'][]): Run[] => svc.filter((r) => names.includes(r.phase));
  const vsBaseline = svc.filter(
    (r) =>
      r.baseline &&
      ((r.size === info.mainSize && r.phase !== 'items-write') || r.phase === 'items-write'),
  );
  const sections = [
    '# Benchmarks',
    '',
    `Generated by \`npm run bench${options.argsLabel}\` on ${info.date}. How to run and read this: [docs/benchmarks.md](docs/benchmarks.md).`,
    '',
    `- Node.js ${info.node}; database ${info.database}`,
    `- Machine: ${info.cpu}, ${info.cores} cores, ${info.memoryGiB} GiB memory, ${info.platform}`,
    `- Load: autocannon, ${options.connections} connections, ${options.duration} s per run${options.warmup ? ` after ${options.warmup} s warm-up` : ''}, loopback; one run at a time`,
    `- Service: \`node dist/main.js\`, NODE_ENV=production, LOG_LEVEL=warn, rate limit out of the way (RATE_LIMIT_MAX=1000000000; its counters in RATE_LIMIT_STORE=${info.rateLimitStore}), QUERY_TIMEOUT_MS=${info.queryTimeoutMs}`,
    "- `CPU ms/req`: CPU time (user + system) of the server process during the load, divided by its responses; `CPU ratio`: the service's over the baseline's",
    "- `DB cmds/req`: database commands the server sent during the load (its `mongodb_commands_total`, read before and after, once no request was in flight) divided by the requests it answered (its own `http_requests_total`); the service's include its background work (polls and sweeps, a few a second)",
    ...(info.notes.length ? ['', ...info.notes.map((n) => `> ${n}`)] : []),
    '',
    '## Checks',
    '',
    '| Check | Result | Numbers |',
    '| --- | --- | --- |',
    ...checkList.map((c) => `| ${c.name} | ${c.status} | ${c.detail} |`),
    '',
    comparisons,
    `## Items: service vs baseline`,
    '',
    table(runs, vsBaseline),
    '',
    '## Growth with the number of items',
    '',
    table(
      runs,
      phase('items-growth').sort((a, b) => a.scenario.localeCompare(b.scenario) || a.size - b.size),
    ),
    '',
    '## Keyset pagination',
    '',
    table(runs, [...phase('projects'), ...svc.filter((r) => r.scenario.startsWith('items-page'))]),
    '',
    '## Other routes',
    '',
    table(runs, phase('other')),
    '',
    `Peak RSS is the service's largest VmRSS, sampled every 50 ms during the run (the baseline's is in bench/results/${basename(options.json)}); the service's lifetime peak (VmHWM) was ${mib(info.serviceHwmKb)} MiB. Latencies are measured per response by the load process, so they have sub-millisecond resolution.`,
    '',
  ];
  return sections.join('\n');
}

export function summary({ runs, checkList }: Pick<Report, 'runs' | 'checkList'>): string {
  const lines = [
    '',
    'scenario                         target    data                        req/s  CPU ms/req   p50 ms   p99 ms  errors  RSS MiB',
  ];
  for (const r of runs) {
    const cells = r.result
      ? [
          rate(r.result.requestsPerSecond),
          cpuMs(r),
          ms(r.result.latencyMs.p50),
          ms(r.result.latencyMs.p99),
          String(errorsOf(r)),
          mib(r.peakRssKb),
        ]
      : [r.status === 'unavailable' ? 'route not available' : 'failed', '', '', '', '', ''];
    const [requests = '', cpu = '', p50 = '', p99 = '', errors = '', rss = ''] = cells;
    lines.push(
      `${r.title.padEnd(32)} ${r.target.padEnd(9)} ${dataLabel(r).padEnd(27)} ${requests.padStart(8)} ${cpu.padStart(11)} ${p50.padStart(8)} ${p99.padStart(8)} ${errors.padStart(7)} ${rss.padStart(8)}` +
        (r.problems.length ? `  ! ${r.problems.join('; ')}` : ''),
    );
  }
  lines.push(
    '',
    ...checkList.map(
      (c) => `${c.status.padEnd(5)} ${c.name}: ${c.detail.replaceAll('<br>', '\n      ')}`,
    ),
    '',
  );
  return lines.join('\n');
}
