// The export and import figures in the report and the stdout summary, with their checks.
import { heapRange, majorGcTimes, quarterPeaks } from './memory-trace';
import { RSS_GROWTH_LIMIT_MIB, type TransferLeg, type TransferRun } from './transfer';
import type { Check } from './types';

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const mib = (kb: number): string => (kb / 1024).toFixed(1);
const growthMiB = (leg: TransferLeg): number => (leg.rssPeakKb - leg.rssBeforeKb) / 1024;

const LABELS: Record<TransferLeg['id'], string> = {
  export: 'export',
  'export-gzip': 'export, gzip',
  import: 'import',
};

function baselineOf(run: TransferRun, leg: TransferLeg): TransferLeg | undefined {
  const direction = leg.id === 'import' ? 'import' : 'export';
  return run.legs.find((l) => l.target === 'baseline' && l.id === direction);
}

function speed(run: TransferRun, leg: TransferLeg): string {
  const base = baselineOf(run, leg);
  const ratio = base?.itemsPerSecond
    ? ` = ${(leg.itemsPerSecond / base.itemsPerSecond).toFixed(2)} × the baseline`
    : '';
  return `${int(leg.itemsPerSecond)} items/s${base ? ` vs baseline ${int(base.itemsPerSecond)}${ratio}` : ''}`;
}

/**
 * The memory target for each service leg (n/a in a smoke run: too few items for the growth to
 * mean anything), and that every leg moved every item.
 */
export function transferChecks(
  run: TransferRun | undefined,
  { smoke, allowMissingRoutes }: { smoke: boolean; allowMissingRoutes: boolean },
): Check[] {
  if (!run) return [];
  const memoryName = (leg: TransferLeg['id']): string =>
    `${LABELS[leg][0]?.toUpperCase()}${LABELS[leg].slice(1)}: service RSS grows < ${RSS_GROWTH_LIMIT_MIB} MiB`;
  const complete = `Export and import: all ${int(run.size)} items out and in (service and baseline)`;
  if (run.missing)
    return [
      { name: memoryName('export'), status: 'n/a', detail: `not available: ${run.missing}` },
      {
        name: complete,
        status: allowMissingRoutes ? 'n/a' : 'FAIL',
        detail: `not available: ${run.missing}`,
      },
    ];
  const memory = run.legs
    .filter((leg) => leg.target === 'service')
    .map((leg): Check => {
      const growth = growthMiB(leg);
      const detail = `+${growth.toFixed(1)} MiB at the peak (${mib(leg.rssBeforeKb)} → ${mib(leg.rssPeakKb)} MiB, ${mib(leg.rssAfterKb)} after); ${speed(run, leg)}`;
      if (smoke)
        return { name: memoryName(leg.id), status: 'n/a', detail: `smoke run (${detail})` };
      return {
        name: memoryName(leg.id),
        status: growth < RSS_GROWTH_LIMIT_MIB ? 'PASS' : 'FAIL',
        detail,
      };
    });
  const failed = run.legs.filter((leg) => leg.problems.length > 0);
  return [
    ...memory,
    {
      name: complete,
      status: failed.length ? 'FAIL' : 'PASS',
      detail: failed.length
        ? failed.map((l) => `${l.target} ${LABELS[l.id]}: ${l.problems.join('; ')}`).join('<br>')
        : `${run.legs.length} transfers, ${int(run.legs.reduce((sum, l) => sum + l.items, 0))} items`,
    },
  ];
}

const HEAP_LABELS = {
  heapUsed: 'heap used',
  heapTotal: 'heap total',
  oldSpace: 'old space',
  external: 'external',
} as const;

/** The service's memory over a leg: RSS by quarter, and the heap figures that moved with it. */
function memoryNote(leg: TransferLeg): string {
  const heap = Object.entries(heapRange(leg.trace)).map(
    ([figure, { before, peak }]) =>
      `${HEAP_LABELS[figure as keyof typeof HEAP_LABELS]} ${before} → ${peak}`,
  );
  const quarters = quarterPeaks(leg.trace).join(' / ');
  const gcs = majorGcTimes(leg.trace);
  const gcNote = gcs.length
    ? `; major GCs at ${gcs.slice(0, 5).join(', ')}${gcs.length > 5 ? ` … (${gcs.length})` : ''} s`
    : '; no major GC';
  return `${LABELS[leg.id]}: RSS peak by quarter of the time ${quarters} MiB${heap.length ? `; ${heap.join(', ')} MiB${gcNote}` : ''}`;
}

export function transferMarkdown(run: TransferRun | undefined, checkList: Check[]): string {
  if (!run) return '';
  const lines = [
    '## Export and import',
    '',
    `\`GET /export\` of a namespace of ${int(run.size)} items in one collection (seeded in ${run.seedSeconds} s), read to its end by a streaming client, without and with gzip; \`POST /import?mode=insert\` of the same item lines, streamed as the body, into a fresh tenant, its result stream read as it comes. The baseline does the same on the same database with the driver alone: a cursor sorted by \`_id\` written out as NDJSON, and \`insertMany\` in batches of 1,000. Each of the service's transfers runs on an instance started for it (the baseline is one process throughout). RSS is the server process's VmRSS before each transfer and its peak during it (sampled every 50 ms); the target is growth below ${RSS_GROWTH_LIMIT_MIB} MiB.`,
    '',
    '| Check | Result | Numbers |',
    '| --- | --- | --- |',
    ...checkList.map((c) => `| ${c.name} | ${c.status} | ${c.detail} |`),
  ];
  if (run.missing)
    return [...lines, '', `Not available in this build: ${run.missing}.`, ''].join('\n');
  lines.push(
    '',
    '| transfer | server | items | seconds | items/s | vs baseline | MiB on the wire | CPU ms/item | database CPU ms/item | RSS before MiB | peak MiB | growth MiB | after MiB | problems |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...run.legs.map((leg) => {
      const base = leg.target === 'service' ? baselineOf(run, leg) : undefined;
      const ratio = base?.itemsPerSecond
        ? (leg.itemsPerSecond / base.itemsPerSecond).toFixed(2)
        : '—';
      return `| ${LABELS[leg.id]} | ${leg.target} | ${int(leg.items)} | ${leg.seconds} | ${int(leg.itemsPerSecond)} | ${ratio} | ${(leg.bytes / 2 ** 20).toFixed(2)} | ${leg.cpuMsPerItem.toFixed(3)} | ${leg.databaseCpuMsPerItem?.toFixed(3) ?? '—'} | ${mib(leg.rssBeforeKb)} | ${mib(leg.rssPeakKb)} | ${growthMiB(leg).toFixed(1)} | ${mib(leg.rssAfterKb)} | ${leg.problems.join('; ')} |`;
    }),
  );
  const notes = run.legs.filter((leg) => leg.target === 'service').map(memoryNote);
  if (notes.length)
    lines.push(
      '',
      "The service's memory, sampled every second: the peak RSS in each quarter of the transfer's time (a leak climbs to the end; a working set levels off), and its heap figures at the start and at their largest (prom-client: live objects, the heap V8 holds, its old space, memory outside the heap such as buffers), and when its full (mark-compact) collections ran.",
      '',
      ...notes.map((note) => `- ${note}`),
    );
  lines.push('');
  return lines.join('\n');
}

export function transferSummary(run: TransferRun | undefined, checkList: Check[]): string {
  if (!run) return '';
  return [
    '',
    ...checkList.map(
      (c) => `${c.status.padEnd(5)} ${c.name}: ${c.detail.replaceAll('<br>', '\n      ')}`,
    ),
    '',
  ].join('\n');
}
