// What an instance costs with no request at all: its own CPU and the database commands it sends
// per second, from two reads of its /metrics. The search-and-expand comparison states it beside
// its figures; the `idle` comparison judges it (docs/deployment.md, "Idle cost").
import type { Ask } from './comparisons';

/** The bounds for one idle instance: CPU ms per second, database commands per second. */
export const IDLE_CPU_MS_PER_S_MAX = 5;
export const IDLE_COMMANDS_PER_S_MAX = 5;
/** How long an instance rests first (its polls back off), then is watched. */
export interface IdleTimes {
  settleMs: number;
  watchMs: number;
}

/** The `idle` comparison's times in default and long runs. */
export const IDLE_SETTLE_MS = 20_000;
export const IDLE_WATCH_MS = 60_000;
export const IDLE_TIMES: IdleTimes = { settleMs: IDLE_SETTLE_MS, watchMs: IDLE_WATCH_MS };
/** A smoke run only checks that the watch works: a few seconds, not the 80 s of a judged one. */
export const SMOKE_IDLE_TIMES: IdleTimes = { settleMs: 1_000, watchMs: 3_000 };

export interface IdleBackground {
  /** How long the instance rested before it was watched. */
  settleSeconds: number;
  seconds: number;
  cpuMsPerSecond: number;
  commandsPerSecond: number;
}

/** A counter of the service's /metrics (prom-client's text format), 0 when absent. */
function counter(text: string, name: string): number {
  return Number(new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text)?.[1] ?? 0);
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits `settleMs` with no request, then watches the service for `watchMs`; a string says why it
 * could not. The two reads of /metrics are the only requests (each a command-free GET: not
 * subtracted).
 */
export async function idleBackground(
  ask: Ask,
  { settleMs = 0, watchMs }: { settleMs?: number; watchMs: number },
): Promise<IdleBackground | string> {
  const sample = async () => {
    const res = await ask('service', 'GET', '/metrics', { keyless: true });
    if (res.status !== 200) return `GET /metrics answered ${res.status}`;
    return {
      at: Date.now(),
      cpu: counter(res.text, 'process_cpu_seconds_total'),
      commands: counter(res.text, 'mongodb_commands_total'),
    };
  };
  await pause(settleMs);
  const before = await sample();
  if (typeof before === 'string') return before;
  await pause(watchMs);
  const after = await sample();
  if (typeof after === 'string') return after;
  const seconds = (after.at - before.at) / 1000;
  return {
    settleSeconds: settleMs / 1000,
    seconds,
    cpuMsPerSecond: ((after.cpu - before.cpu) * 1000) / seconds,
    commandsPerSecond: (after.commands - before.commands) / seconds,
  };
}
