// Runs one feature comparison (lib/comparisons.ts): asks the service whether the feature is
// there, probes every variant once, then hands all of them to one load process, which warms each
// up and loads them in turn for a number of rounds, the order flipping every round (A B, B A, …)
// so that a machine getting busier or quieter, or a server still warming up, weighs on every
// variant alike.
import { call } from './api';
import type { Ask, Comparison, ComparisonContext } from './comparisons';
import { probe, runLoad, sumLoads, type LoadSettings } from './load-runner';
import type { ScenarioRequest, TargetName } from './scenarios';
import type { Target } from './servers';
import type { CompareSettings, ComparisonRun, VariantRun } from './types';

export interface CompareEnvironment {
  load: LoadSettings;
  settings: CompareSettings;
  targets: Partial<Record<TargetName, Target>>;
  /** The comparisons' own items collection. */
  ctx: ComparisonContext;
  log: (message: string) => void;
}

interface Loaded {
  target: Target;
  request: ScenarioRequest;
  record: VariantRun;
}

const fmt = (n: number | undefined, digits = 2): string =>
  n === undefined ? '—' : n.toFixed(digits);

export async function runComparison(
  comparison: Comparison,
  { load, settings, targets, ctx, log }: CompareEnvironment,
): Promise<ComparisonRun> {
  const { seconds, warmup } = settings;
  const rounds = settings.rounds * (comparison.roundsFactor ?? 1);
  const run: ComparisonRun = {
    comparison: comparison.id,
    title: comparison.title,
    route: comparison.route,
    size: ctx.items.size,
    rounds,
    seconds,
    variants: [],
  };
  log(`  ${comparison.title}`);
  const ask: Ask = (name, method, path, options = {}) => {
    const target = targets[name];
    if (!target) throw new Error(`${comparison.id} needs the ${name} server, which is not running`);
    const { keyless = false, ...rest } = options;
    return call(target.url, method, path, { key: keyless ? undefined : load.key, ...rest });
  };
  const prepared = await comparison.prepare(ask, ctx);
  if (prepared.missing) {
    log(`    not available: ${prepared.missing}`);
    return { ...run, missing: prepared.missing };
  }
  const context: ComparisonContext = {
    ...ctx,
    etag: prepared.etag,
    limitedKey: prepared.limitedKey,
    access: prepared.access,
    searchExpand: prepared.searchExpand,
  };
  if (prepared.notes) run.notes = prepared.notes;
  if (prepared.idle) run.idle = prepared.idle;

  const loaded: Loaded[] = [];
  for (const variant of comparison.variants) {
    const target = targets[variant.target];
    if (!target) throw new Error(`${comparison.id} needs the ${variant.target} server`);
    const request = variant.request({ ...context, target: variant.target });
    const probed = await probe(target, request, load.key);
    const record: VariantRun = {
      variant: variant.id,
      label: variant.label,
      target: variant.target,
      status: 'ok',
      problems: probed.problems,
      probeMs: probed.response.ms,
      rounds: [],
    };
    run.variants.push(record);
    if (probed.missing) {
      log(`    not available: ${variant.label}: route not available`);
      return { ...run, missing: `${variant.label}: route not available` };
    }
    // The scenarios' rule, over the variant's rounds together: a request too slow to load is
    // reported, not loaded.
    const loadedSeconds = rounds * seconds;
    if (probed.response.ms * load.connections > (loadedSeconds * 1000) / 2) {
      record.status = 'failed';
      record.tooSlow = true;
      record.problems.push(
        `a single request took ${fmt(probed.response.ms)} ms: too slow for ${load.connections} connections in ${loadedSeconds} s, not loaded`,
      );
      log(`    ${variant.label.padEnd(28)} ! ${record.problems.join('; ')}`);
      continue;
    }
    loaded.push({ target, request, record });
  }

  if (loaded.length === 0) return run;
  const outcome = await runLoad(load, loaded, { seconds, warmup, rounds });
  for (const [i, { record }] of loaded.entries()) {
    record.problems.push(...outcome.problems);
    record.rounds = outcome.rounds?.[i] ?? [];
    for (const [r, round] of record.rounds.entries()) {
      const errors = round.unexpected + round.errors;
      if (errors > 0)
        record.problems.push(
          `round ${r + 1}: ${errors} errors, status codes ${JSON.stringify(round.statusCodes)}`,
        );
      if (round.responses === 0) record.problems.push(`round ${r + 1}: no response`);
    }
  }
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? loaded : [...loaded].reverse();
    for (const { record } of order) {
      const round = record.rounds[r];
      if (!round) continue;
      const totals = sumLoads([round]);
      log(
        `    ${record.label.padEnd(28)} round ${r + 1}  ${totals.requestsPerSecond.toFixed(1).padStart(8)} req/s  ` +
          `CPU ${fmt(totals.cpuMs, 3)} ms/req  database CPU ${fmt(totals.databaseCpuMs, 3)} ms/req  errors ${totals.errors}`,
      );
    }
  }
  for (const { record } of loaded) {
    if (record.problems.length > 0 || record.rounds.length < rounds) record.status = 'failed';
  }
  return run;
}
