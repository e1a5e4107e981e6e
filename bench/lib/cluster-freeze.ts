// A frozen cluster seen from the other clusters' tenants: GET by _id for the tenants on two
// clusters, measured before and while the third cluster's server is stopped (SIGSTOP) with its own
// tenant's requests waiting on it. The others' p99 may grow by at most half (issue: 1.5×), and
// none of their requests may fail; the frozen tenant's requests answer 503.
import { call } from './api';
import { runLoad, type LoadSettings } from './load-runner';
import { quantile } from './comparisons';
import type { ScenarioRequest } from './scenarios';
import { ms } from './tail-latency';
import type { Target } from './servers';
import type { Check, LoadResult } from './types';

/** The others' p99 while one cluster is frozen, at most this many times their p99 before. */
export const FROZEN_P99_MAX = 1.5;
/** Requests of the frozen cluster's tenant kept waiting at once during the frozen round. */
const FROZEN_CONCURRENCY = 10;

export interface FreezeRun {
  seconds: number;
  /** Round by round: the others' load before the freeze and while one cluster is frozen. */
  rounds: { before?: LoadResult; during?: LoadResult }[];
  /** Statuses the frozen cluster's tenant got while frozen. */
  frozenStatuses: Record<string, number>;
  problems: string[];
}

/**
 * `rounds` times: loads `others` (GET by _id, keys taken in turn) for `seconds`, freezes
 * `frozenPid`, loads them again while `frozenKey`'s requests wait on the frozen server, then
 * thaws it. Round by round, so that a burst from the rest of the machine weighs on one ratio, not
 * on the verdict (the median of the ratios).
 */
export async function measureFreeze(options: {
  load: LoadSettings;
  target: Target;
  others: ScenarioRequest;
  frozenPid: number;
  frozenKey: string;
  frozenPath: string;
  seconds: number;
  rounds: number;
}): Promise<FreezeRun> {
  const { load, target, others, seconds } = options;
  const run: FreezeRun = { seconds, rounds: [], frozenStatuses: {}, problems: [] };
  // The stopped server has no CPU to settle: the machine is quiet without it.
  const settled = {
    ...load,
    busyPids: () => load.busyPids().filter((p) => p !== options.frozenPid),
  };
  for (let round = 0; round < options.rounds; round += 1) {
    const before = await runLoad(settled, [{ target, request: others }], {
      seconds,
      warmup: round === 0 ? 1 : 0,
    });
    run.problems.push(...before.problems);
    process.kill(options.frozenPid, 'SIGSTOP');
    let frozen = true;
    const waiting = Array.from({ length: FROZEN_CONCURRENCY }, async () => {
      while (frozen) {
        const res = await call(target.url, 'GET', options.frozenPath, { key: options.frozenKey });
        run.frozenStatuses[res.status] = (run.frozenStatuses[res.status] ?? 0) + 1;
      }
    });
    let during: Awaited<ReturnType<typeof runLoad>> | undefined;
    try {
      // The frozen tenant's first requests are waiting before the measured load starts.
      await new Promise((resolve) => setTimeout(resolve, 500));
      during = await runLoad(settled, [{ target, request: others }], { seconds });
      run.problems.push(...during.problems);
    } finally {
      frozen = false;
      process.kill(options.frozenPid, 'SIGCONT');
      await Promise.all(waiting);
    }
    run.rounds.push({ before: before.rounds?.[0]?.[0], during: during?.rounds?.[0]?.[0] });
  }
  return run;
}

export function freezeChecks(run: FreezeRun | undefined, smoke: boolean): Check[] {
  const name = `A frozen cluster: the other clusters' tenants see no error and a p99 within ${FROZEN_P99_MAX}× of before`;
  const measured = (run?.rounds ?? []).filter(
    (r) => r.before?.latencyMs.p99 && r.during?.latencyMs.p99,
  );
  if (!run || measured.length === 0)
    return [
      {
        name,
        status: 'n/a',
        detail: `not measured${run?.problems.length ? `: ${run.problems.join('; ')}` : ''}`,
      },
    ];
  const ratios = measured.map(
    (r) => (r.during?.latencyMs.p99 ?? 0) / (r.before?.latencyMs.p99 ?? 1),
  );
  const ratio = quantile(ratios, 0.5) ?? 0;
  const errors = measured.reduce(
    (sum, r) => sum + (r.during?.unexpected ?? 0) + (r.during?.errors ?? 0),
    0,
  );
  const p99 = (pick: (r: FreezeRun['rounds'][number]) => LoadResult | undefined) =>
    quantile(
      measured.map((r) => pick(r)?.latencyMs.p99 ?? 0),
      0.5,
    );
  const frozen = Object.entries(run.frozenStatuses)
    .map(([status, count]) => `${count} × ${status}`)
    .join(', ');
  const detail =
    `median of ${measured.length} rounds' p99 ratios ${ratio.toFixed(2)}× (middle half ${(quantile(ratios, 0.25) ?? ratio).toFixed(2)} … ${(quantile(ratios, 0.75) ?? ratio).toFixed(2)}); ` +
    `median p99 ${ms(p99((r) => r.during))} ms frozen vs ${ms(p99((r) => r.before))} ms before; ${errors} errors; the frozen cluster's tenant got ${frozen || 'no answer'}`;
  if (smoke) return [{ name, status: 'n/a', detail: `smoke run (${detail})` }];
  return [{ name, status: errors === 0 && ratio <= FROZEN_P99_MAX ? 'PASS' : 'FAIL', detail }];
}

export function freezeMarkdown(run: FreezeRun | undefined): string {
  if (!run) return '';
  const cells = (r: LoadResult | undefined): string =>
    r
      ? `${r.requestsPerSecond.toFixed(1)} | ${ms(r.latencyMs.p99)} | ${r.unexpected + r.errors}`
      : 'not measured | | ';
  return [
    '## A frozen cluster',
    '',
    `\`GET /data/{c}/_id/{id}\` for tenants on two of three clusters, on the instance with all three: in each round ${run.seconds} s before and ${run.seconds} s while the third cluster's server is stopped (SIGSTOP) and its tenant's requests wait on it, ${FROZEN_CONCURRENCY} at a time. The frozen tenant got: ${
      Object.entries(run.frozenStatuses)
        .map(([status, count]) => `${count} × ${status}`)
        .join(', ') || 'no answer'
    }.`,
    '',
    '| round | before req/s | p99 ms | errors | frozen req/s | p99 ms | errors |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...run.rounds.map((r, i) => `| ${i + 1} | ${cells(r.before)} | ${cells(r.during)} |`),
    '',
  ].join('\n');
}
