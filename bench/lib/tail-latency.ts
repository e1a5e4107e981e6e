// Tail latency at 100 connections: GET item by _id on the service with many clients at once,
// reporting the latency percentiles, errors, the service's peak RSS and its event-loop lag over
// the run (from its own metrics).
import { runLoad, type LoadSettings } from './load-runner';
import { itemsById, SAMPLE_PATHS, type ItemsContext } from './scenarios';
import type { Target } from './servers';
import type { LoadResult } from './types';

export const TAIL_CONNECTIONS = 100;

export interface TailRun {
  connections: number;
  seconds: number;
  size: number;
  result?: LoadResult;
  peakRssKb: number;
  problems: string[];
}

export async function tailLatency(
  load: LoadSettings,
  service: Target,
  ctx: Pick<ItemsContext, 'items' | 'pick'>,
  seconds: number,
): Promise<TailRun> {
  const request = itemsById(ctx.items, ctx.pick(SAMPLE_PATHS, ctx.items.size));
  const outcome = await runLoad(
    { ...load, connections: TAIL_CONNECTIONS },
    [{ target: service, request }],
    {
      seconds,
      warmup: 1,
    },
  );
  const result = outcome.rounds?.[0]?.[0];
  const problems = [...outcome.problems];
  if (result && result.unexpected + result.errors > 0)
    problems.push(
      `${result.unexpected + result.errors} errors, status codes ${JSON.stringify(result.statusCodes)}`,
    );
  return {
    connections: TAIL_CONNECTIONS,
    seconds,
    size: ctx.items.size,
    result,
    peakRssKb: outcome.peakRssKb,
    problems,
  };
}

export const ms = (n: number | null | undefined): string =>
  n === null || n === undefined ? '—' : n < 10 ? n.toFixed(2) : n.toFixed(1);

export function tailMarkdown(run: TailRun | undefined): string {
  if (!run) return '';
  const r = run.result;
  const lag = r?.eventLoopLagMs;
  return [
    `## Tail latency at ${run.connections} connections`,
    '',
    `\`GET /data/{c}/_id/{id}\` on the service, ${run.connections} connections for ${run.seconds} s after a 1 s warm-up, on ${run.size.toLocaleString('en-US')} items. The event-loop lag is the service's own (prom-client's \`nodejs_eventloop_lag_*\` over the run).`,
    '',
    '| req/s | p50 ms | p99 ms | max ms | errors | peak RSS MiB | event-loop lag p50 ms | p99 ms | max ms |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    r
      ? `| ${r.requestsPerSecond.toFixed(1)} | ${ms(r.latencyMs.p50)} | ${ms(r.latencyMs.p99)} | ${ms(r.latencyMs.max)} | ${r.unexpected + r.errors} | ${(run.peakRssKb / 1024).toFixed(0)} | ${ms(lag?.p50)} | ${ms(lag?.p99)} | ${ms(lag?.max)} |`
      : `| failed: ${run.problems.join('; ')} | | | | | | | | |`,
    '',
  ].join('\n');
}
