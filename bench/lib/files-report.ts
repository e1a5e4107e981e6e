// The file upload and download figures in the report and the stdout summary, with their checks.
import type { FilesLeg, FilesLegId, FilesRun } from './files';
import type { Check } from './types';

const LEG_IDS: FilesLegId[] = ['upload-small', 'download-small', 'upload-large', 'download-large'];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const growthMiB = (leg: FilesLeg): number => (leg.rssPeakKb - leg.rssBeforeKb) / 1024;

export interface FilesRow {
  id: FilesLegId;
  target: FilesLeg['target'];
  rounds: number;
  files: number;
  mib: number;
  /** Medians over the rounds. */
  mibPerSecond: number;
  cpuMsPerMiB: number;
  databaseCpuMsPerMiB?: number;
  /** The largest RSS growth of any round. */
  rssGrowthMiB: number;
  rssPeakMiB: number;
}

/** One row per leg and server: the medians over the rounds. */
export function filesRows(run: FilesRun): FilesRow[] {
  const rows: FilesRow[] = [];
  for (const id of LEG_IDS) {
    for (const target of ['service', 'baseline'] as const) {
      const legs = run.legs.filter((l) => l.id === id && l.target === target);
      const [first] = legs;
      if (!first) continue;
      const database = legs
        .map((l) => l.databaseCpuMsPerMiB)
        .filter((v): v is number => v !== undefined);
      rows.push({
        id,
        target,
        rounds: legs.length,
        files: first.files,
        mib: first.bytes / 2 ** 20,
        mibPerSecond: median(legs.map((l) => l.mibPerSecond)),
        cpuMsPerMiB: median(legs.map((l) => l.cpuMsPerMiB)),
        ...(database.length ? { databaseCpuMsPerMiB: median(database) } : {}),
        rssGrowthMiB: Math.max(...legs.map(growthMiB)),
        rssPeakMiB: Math.max(...legs.map((l) => l.rssPeakKb)) / 1024,
      });
    }
  }
  return rows;
}

function ratioOf(rows: FilesRow[], row: FilesRow): string {
  const base = rows.find((r) => r.id === row.id && r.target === 'baseline');
  return row.target === 'service' && base?.mibPerSecond
    ? (row.mibPerSecond / base.mibPerSecond).toFixed(2)
    : '—';
}

/**
 * That every file went through, intact. The memory figures have no target: the RSS growth of a
 * fresh instance is mostly garbage the collector has not reclaimed yet, reported next to the
 * baseline's.
 */
export function filesChecks(
  run: FilesRun | undefined,
  { allowMissingRoutes }: { allowMissingRoutes: boolean },
): Check[] {
  if (!run) return [];
  const complete = 'Files: every upload and download complete and intact (service and baseline)';
  if (run.missing)
    return [
      {
        name: complete,
        status: allowMissingRoutes ? 'n/a' : 'FAIL',
        detail: `not available: ${run.missing}`,
      },
    ];
  const failed = run.legs.filter((l) => l.problems.length > 0);
  return [
    {
      name: complete,
      status: failed.length ? 'FAIL' : 'PASS',
      detail: failed.length
        ? failed
            .map((l) => `round ${l.round} ${l.target} ${l.id}: ${l.problems.join('; ')}`)
            .join('<br>')
        : `${run.legs.reduce((sum, l) => sum + l.files, 0)} transfers, ${(run.legs.reduce((sum, l) => sum + l.bytes, 0) / 2 ** 20).toFixed(0)} MiB`,
    },
  ];
}

function describe(run: FilesRun): string {
  const { smallFiles, largeMiB, rounds } = run.settings;
  return `\`POST /files\` (the raw body, with Content-Length) of ${smallFiles} files of 1 MiB one after the other, then \`GET /files/{id}/content\` of each read to its end; then the same with one file of ${largeMiB} MiB; ${rounds} round${rounds === 1 ? '' : 's'}. The baseline does the same on the same tenant database with the driver's \`GridFSBucket\` alone (\`openUploadStream\`, \`openDownloadStream\`, 255 KiB chunks as the service's), behind the same key lookup. The large file goes through a service instance started for it, so that its RSS growth is its own and not what the small files left for the collector. Every download is checked against the bytes sent (length and SHA-256); files are deleted between rounds, not timed. Figures are medians over the rounds; CPU is the server process's (and the embedded database's) from /proc, per MiB moved; RSS is the server's VmRSS, sampled every 50 ms, its largest growth over a leg of any round.`;
}

export function filesMarkdown(run: FilesRun | undefined, checkList: Check[]): string {
  if (!run) return '';
  const lines = [
    '## Files',
    '',
    describe(run),
    '',
    '| Check | Result | Numbers |',
    '| --- | --- | --- |',
    ...checkList.map((c) => `| ${c.name} | ${c.status} | ${c.detail} |`),
  ];
  if (run.missing)
    return [...lines, '', `Not available in this build: ${run.missing}.`, ''].join('\n');
  const rows = filesRows(run);
  lines.push(
    '',
    '| leg | server | files × MiB | MiB/s | vs baseline | CPU ms/MiB | database CPU ms/MiB | RSS growth MiB | RSS peak MiB |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.id} | ${r.target} | ${r.files} × ${(r.mib / Math.max(1, r.files)).toFixed(0)} | ${r.mibPerSecond.toFixed(1)} | ${ratioOf(rows, r)} | ${r.cpuMsPerMiB.toFixed(1)} | ${r.databaseCpuMsPerMiB?.toFixed(1) ?? '—'} | ${r.rssGrowthMiB.toFixed(1)} | ${r.rssPeakMiB.toFixed(0)} |`,
    ),
    '',
  );
  return lines.join('\n');
}

export function filesSummary(run: FilesRun | undefined, checkList: Check[]): string {
  if (!run) return '';
  const rows = run.missing ? [] : filesRows(run);
  return [
    '',
    ...rows.map(
      (r) =>
        `${r.id.padEnd(15)} ${r.target.padEnd(8)} ${r.mibPerSecond.toFixed(1).padStart(7)} MiB/s (× ${ratioOf(rows, r)})  CPU ${r.cpuMsPerMiB.toFixed(1).padStart(6)} ms/MiB  database ${r.databaseCpuMsPerMiB?.toFixed(1) ?? '—'} ms/MiB  RSS +${r.rssGrowthMiB.toFixed(1)} MiB`,
    ),
    ...checkList.map(
      (c) => `${c.status.padEnd(5)} ${c.name}: ${c.detail.replaceAll('<br>', '\n      ')}`,
    ),
    '',
  ].join('\n');
}
