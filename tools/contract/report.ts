import { existsSync, readFileSync } from 'node:fs';

/** The part of Schemathesis's JSON report (`--report json`) the summary reads. */
interface JsonReport {
  schemathesis_version: string;
  seed: number | null;
  running_time: number;
  exit_code: number;
  operations: { selected: number; tested: number; errored: number; skipped: number };
  test_cases: { generated: number; with_failures: number; unique_failures: number };
  failures: unknown[];
  errors: unknown[];
  filtered: number;
  warnings: Record<string, unknown[]>;
}

export interface RunResult {
  principal: string;
  exitCode: number;
  seconds: number;
  selected: number;
  tested: number;
  cases: number;
  failures: number;
  errors: number;
  /** Failures dropped by exclusions.py, by exclusion name. */
  excluded: Record<string, number>;
  warnings: string[];
  seed: number | null;
}

/** Failures exclusions.py dropped, by exclusion name (one JSON line per drop). */
function excludedCounts(logPath: string): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!existsSync(logPath)) return counts;
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    if (!line) continue;
    const { exclusion } = JSON.parse(line) as { exclusion: string };
    counts[exclusion] = (counts[exclusion] ?? 0) + 1;
  }
  return counts;
}

/**
 * A run's figures. A missing or unreadable report (Schemathesis crashed, or could not load the
 * document) counts as one error, so that it can never pass for a clean run.
 */
export function readResult(
  principal: string,
  exitCode: number,
  reportPath: string,
  exclusionsLog: string,
  seconds: number,
): RunResult {
  const base = { principal, exitCode, seconds, excluded: excludedCounts(exclusionsLog) };
  let report: JsonReport;
  try {
    report = JSON.parse(readFileSync(reportPath, 'utf8')) as JsonReport;
  } catch {
    return {
      ...base,
      selected: 0,
      tested: 0,
      cases: 0,
      failures: 0,
      errors: 1,
      warnings: ['no report was written'],
      seed: null,
    };
  }
  return {
    ...base,
    selected: report.operations.selected,
    tested: report.operations.tested,
    cases: report.test_cases.generated,
    failures: report.test_cases.unique_failures,
    errors: report.errors.length + report.operations.errored,
    warnings: Object.entries(report.warnings)
      .filter(([, entries]) => Array.isArray(entries) && entries.length > 0)
      .map(([name, entries]) => `${name} (${entries.length})`),
    seed: report.seed,
  };
}

export function clean(result: RunResult): boolean {
  return result.exitCode === 0 && result.failures === 0 && result.errors === 0;
}

const pad = (text: string | number, width: number): string => String(text).padStart(width);

/** The table printed at the end of a run. */
export function summaryTable(results: RunResult[]): string {
  const lines = [
    `${'principal'.padEnd(10)}${pad('operations', 12)}${pad('cases', 8)}${pad('failures', 10)}${pad('errors', 8)}${pad('excluded', 10)}${pad('time', 9)}  result`,
  ];
  for (const r of results) {
    const excluded = Object.values(r.excluded).reduce((sum, n) => sum + n, 0);
    lines.push(
      `${r.principal.padEnd(10)}${pad(`${r.tested}/${r.selected}`, 12)}${pad(r.cases, 8)}${pad(r.failures, 10)}${pad(r.errors, 8)}${pad(excluded, 10)}${pad(`${r.seconds.toFixed(1)} s`, 9)}  ${clean(r) ? 'clean' : 'FAILED'}`,
    );
  }
  const total = (pick: (r: RunResult) => number): number =>
    results.reduce((sum, r) => sum + pick(r), 0);
  lines.push(
    `${'total'.padEnd(10)}${pad(
      total((r) => r.tested),
      12,
    )}${pad(
      total((r) => r.cases),
      8,
    )}${pad(
      total((r) => r.failures),
      10,
    )}${pad(
      total((r) => r.errors),
      8,
    )}${pad(
      total((r) => Object.values(r.excluded).reduce((sum, n) => sum + n, 0)),
      10,
    )}${pad(`${total((r) => r.seconds).toFixed(1)} s`, 9)}`,
  );
  const excluded = new Map<string, number>();
  for (const r of results) {
    for (const [name, n] of Object.entries(r.excluded))
      excluded.set(name, (excluded.get(name) ?? 0) + n);
  }
  if (excluded.size > 0) {
    lines.push(
      '',
      'Excluded (tools/contract/exclusions.py):',
      ...[...excluded].map(([name, n]) => `  ${name}: ${n}`),
    );
  }
  const warned = results.filter((r) => r.warnings.length > 0);
  if (warned.length > 0) {
    lines.push(
      '',
      'Schemathesis warnings (not failures):',
      ...warned.map((r) => `  ${r.principal}: ${r.warnings.join(', ')}`),
    );
  }
  return lines.join('\n');
}
