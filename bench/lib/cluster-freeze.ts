// A frozen cluster seen from the other clusters' tenants: GET by _id for the tenants on two
// clusters, measured before and while the third cluster's server is stopped (SIGSTOP) with its own
// tenant's requests waiting on it. The others' p99 may grow by at most half (issue: 1.5×), and
// none of their requests may fail; the frozen tenant's requests answer 503.
import { call } from './api';
import { runLoad, type LoadSettings } from './load-runner';
import type { ScenarioRequest } from './scenarios';
import type { Target } from './servers';
import type { Check, LoadResult } from './types';

/** The others' p99 while one cluster is frozen, at most this many times their p99 before. */
export const FROZEN_P99_MAX = 1.5;
/** Requests of the frozen cluster's tenant kept waiting at once during the frozen round. */
const FROZEN_CONCURRENCY = 10;

export interface FreezeRun {
  seconds: number;
  before?: LoadResult;
  during?: LoadResult;
  /** Statuses the frozen cluster's tenant got while frozen. */
  frozenStatuses: Record<string, number>;
  problems: string[];
}

/**
 * Loads `others` (GET by _id, keys taken in turn) for `seconds`, freezes `frozenPid`, loads them
 * again while `frozenKey`'s requests wait on the frozen server, then thaws it.
 */
export async function measureFreeze(options: {
  load: LoadSettings;
  target: Target;
  others: ScenarioRequest;
  frozenPid: number;
  frozenKey: string;
  frozenPath: string;
  seconds: number;
}): Promise<FreezeRun> {
  const { load, target, others, seconds } = options;
  const run: FreezeRun = { seconds, frozenStatuses: {}, problems: [] };
  const before = await runLoad(load, [{ target, request: others }], { seconds, warmup: 1 });
  run.before = before.rounds?.[0]?.[0];
  run.problems.push(...before.problems);

  process.kill(options.frozenPid, 'SIGSTOP');
  let frozen = true;
  const waiting = Array.from({ length: FROZEN_CONCURRENCY }, async () => {
    while (frozen) {
      const res = await call(target.url, 'GET', options.frozenPath, { key: options.frozenKey });
      run.frozenStatuses[res.status] = (run.frozenStatuses[res.status] ?? 0) + 1;
    }
  });
  try {
    // The frozen tenant's first requests are waiting before the measured load starts.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = await runLoad(
      // The stopped server has no CPU to settle: the machine is quiet without it.
      { ...load, busyPids: () => load.busyPids().filter((pid) => pid !== options.frozenPid) },
      [{ target, request: others }],
      { seconds },
    );
    run.during = during.rounds?.[0]?.[0];
    run.problems.push(...during.problems);
  } finally {
    frozen = false;
    process.kill(options.frozenPid, 'SIGCONT');
    await Promise.all(waiting);
  }
  return run;
}

const ms = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : n < 10 ? n.toFixed(2) : n.toFixed(1);

export function freezeChecks(run: FreezeRun | undefined, smoke: boolean): Check[] {
  const name = `A frozen cluster: the other clusters' tenants see no error and a p99 within ${FROZEN_P99_MAX}× of before`;
  const before = run?.before?.latencyMs.p99;
  const during = run?.during?.latencyMs.p99;
  if (!run || !before || !during || !run.during)
    return [
      {
        name,
        status: 'n/a',
        detail: `not measured${run?.problems.length ? `: ${run.problems.join('; ')}` : ''}`,
      },
    ];
  const errors = run.during.unexpected + run.during.errors;
  const ratio = during / before;
  const frozen = Object.entries(run.frozenStatuses)
    .map(([status, count]) => `${count} × ${status}`)
    .join(', ');
  const detail = `p99 ${ms(during)} ms frozen vs ${ms(before)} ms before (${ratio.toFixed(2)}×), ${errors} errors; the frozen cluster's tenant got ${frozen || 'no answer'}`;
  if (smoke) return [{ name, status: 'n/a', detail: `smoke run (${detail})` }];
  return [{ name, status: errors === 0 && ratio <= FROZEN_P99_MAX ? 'PASS' : 'FAIL', detail }];
}

export function freezeMarkdown(run: FreezeRun | undefined): string {
  if (!run) return '';
  const row = (label: string, r: LoadResult | undefined): string =>
    r
      ? `| ${label} | ${r.requestsPerSecond.toFixed(1)} | ${ms(r.latencyMs.p50)} | ${ms(r.latencyMs.p99)} | ${ms(r.latencyMs.max)} | ${r.unexpected + r.errors} |`
      : `| ${label} | not measured | | | | |`;
  return [
    '## A frozen cluster',
    '',
    `\`GET /data/{c}/_id/{id}\` for tenants on two of three clusters, on the instance with all three, ${run.seconds} s before and ${run.seconds} s while the third cluster's server is stopped (SIGSTOP) and its tenant's requests wait on it, ${FROZEN_CONCURRENCY} at a time. The frozen tenant got: ${
      Object.entries(run.frozenStatuses)
        .map(([status, count]) => `${count} × ${status}`)
        .join(', ') || 'no answer'
    }.`,
    '',
    '| | req/s | p50 ms | p99 ms | max ms | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    row('before', run.before),
    row('one cluster frozen', run.during),
    '',
  ].join('\n');
}
