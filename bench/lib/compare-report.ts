// The feature comparisons in BENCHMARKS.md (a section with its own checks and one table per
// comparison) and in the stdout summary.
import { CLUSTER_COMPARISON_CHECKS } from './cluster-spread';
import { comparisons } from './comparisons';
import { sumLoads, type LoadTotals } from './load-runner';
import { schemaComparison } from './schema-cost';
import type { Check, ComparisonRun, VariantRun } from './types';

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const rate = (n: number): string => (n >= 100 ? int(n) : n.toFixed(1));
const ms = (n: number | undefined, digits = 2): string =>
  n === undefined ? '—' : n.toFixed(digits);

/** A variant's totals, when all its rounds ran without a problem. */
function totalsOf(variant: VariantRun | undefined): LoadTotals | undefined {
  return variant?.status === 'ok' && variant.rounds.length > 0
    ? sumLoads(variant.rounds)
    : undefined;
}

/**
 * Each comparison's checks: n/a when the feature is not in this build (the error check says
 * whether that is allowed) and, like every speed check, in a smoke run.
 */
export function comparisonChecks(runs: ComparisonRun[], smoke: boolean): Check[] {
  return [...comparisons, schemaComparison, ...CLUSTER_COMPARISON_CHECKS].flatMap((comparison) => {
    const run = runs.find((r) => r.comparison === comparison.id);
    const list = comparison.checks(
      (id) => totalsOf(run?.variants.find((v) => v.variant === id)),
      run,
    );
    const na = (detail: string): Check[] =>
      list.map((check) => ({ ...check, status: 'n/a', detail }));
    if (!run) return na('not run');
    if (run.missing) return na(`not available: ${run.missing}`);
    return smoke
      ? list.map((check) => ({ ...check, status: 'n/a', detail: `smoke run (${check.detail})` }))
      : list;
  });
}

function variantRow(variant: VariantRun): string {
  const label = `${variant.label} | ${variant.target}`;
  if (variant.rounds.length === 0) {
    const why = variant.tooSlow
      ? `too slow to load (single request ${ms(variant.probeMs)} ms)`
      : 'failed';
    return `| ${label} | ${why} | — | — | — | — | — | — | — |`;
  }
  const t = sumLoads(variant.rounds);
  const errors = `${t.errors}${variant.problems.length > 0 ? ' ⚠' : ''}`;
  return `| ${label} | ${rate(t.requestsPerSecond)} | ${ms(t.meanMs)} | ${ms(t.cpuMs, 3)} | ${t.cpuMsPerRound.map((c) => ms(c, 3)).join(', ')} | ${ms(t.commands)} | ${ms(t.databaseCpuMs, 3)} | ${int(t.responses)} | ${errors} |`;
}

export function comparisonsMarkdown(runs: ComparisonRun[], checkList: Check[]): string {
  const first = runs[0];
  const lines = [
    '## Feature comparisons',
    '',
    first
      ? `What a request costs the service next to the baseline (\`Service cost\`: every item scenario the baseline serves), and what metrics, an Idempotency-Key, the change feed, a conditional GET and a collection's JSON Schema cost the service, on a collection of ${int(first.size)} items. The variants of a comparison ran in turns, round after round (the order flips every round), after a warm-up. \`CPU ms/req\` is the server process's CPU time (user + system) during the load divided by its responses: the figure the CPU checks judge (the median of the round-by-round ratios), since throughput here is mostly the database's. \`DB cmds/req\` is the database commands the server sent (its \`mongodb_commands_total\`) per response, background work included. \`database CPU ms/req\` is the embedded database server's over the same time.`
      : 'No comparison ran.',
    '',
    '| Check | Result | Numbers |',
    '| --- | --- | --- |',
    ...checkList.map((c) => `| ${c.name} | ${c.status} | ${c.detail} |`),
  ];
  for (const run of runs) {
    lines.push('', `### ${run.title}`, '');
    if (run.missing) {
      lines.push(`Not available in this build: ${run.missing}.`);
      continue;
    }
    // A comparison without variants (`idle`) measured outside any load: its notes say what (an
    // empty note after the first starts a paragraph).
    if (run.variants.length === 0) {
      lines.push(...(run.notes ?? []).filter((note, i) => i > 0 || note !== ''));
      continue;
    }
    lines.push(
      `\`${run.route}\`, ${int(run.size)} items, ${run.rounds} round${run.rounds === 1 ? '' : 's'} of ${run.seconds} s per variant.`,
      ...(run.notes ?? []).map((note) => `${note}`),
      '',
      '| Variant | Server | req/s | mean ms | CPU ms/req | CPU ms/req by round | DB cmds/req | database CPU ms/req | responses | errors |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...run.variants.map(variantRow),
    );
  }
  lines.push('');
  return lines.join('\n');
}

export function comparisonsSummary(runs: ComparisonRun[], checkList: Check[]): string {
  const lines = [
    '',
    'comparison / variant                          server                  req/s  CPU ms/req  cmds/req  db CPU ms/req  errors',
  ];
  for (const run of runs) {
    lines.push(run.title + (run.missing ? `: not available (${run.missing})` : ''));
    for (const variant of run.variants) {
      const t = variant.rounds.length ? sumLoads(variant.rounds) : undefined;
      lines.push(
        `  ${variant.label.padEnd(43)} ${variant.target.padEnd(20)} ` +
          (t
            ? `${rate(t.requestsPerSecond).padStart(8)} ${ms(t.cpuMs, 3).padStart(11)} ${ms(t.commands).padStart(9)} ${ms(t.databaseCpuMs, 3).padStart(14)} ${String(t.errors).padStart(7)}`
            : 'not loaded') +
          (variant.problems.length ? `  ! ${variant.problems.join('; ')}` : ''),
      );
    }
  }
  lines.push('', ...checkList.map((c) => `${c.status.padEnd(5)} ${c.name}: ${c.detail}`), '');
  return lines.join('\n');
}
