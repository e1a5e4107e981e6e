// What an instance costs with no request at all: its own CPU and the database commands it sends
// per second, from reads of its /metrics. The search-and-expand comparison states it beside its
// figures; the `idle` comparison judges it (docs/deployment.md, "Idle cost").
import type { Ask } from './comparisons';

/** The bounds for one idle instance: CPU ms per second, database commands per second. */
export const IDLE_CPU_MS_PER_S_MAX = 5;
export const IDLE_COMMANDS_PER_S_MAX = 5;
/**
 * How long an instance rests, then is watched. `afterLoadFromMs`, when set, also reports the
 * window from then until the watch begins: the first minute after the load, not judged.
 */
export interface IdleTimes {
  afterLoadFromMs?: number;
  settleMs: number;
  watchMs: number;
}

/**
 * The `idle` comparison's times in default and long runs. It judges an instance that has become
 * idle: 80 s after the load, its polls have backed off to their ceilings (the lifecycle takeover
 * polls are the slowest, within about 75 s: docs/deployment.md, "Idle cost") and V8 has shrunk
 * the heap the load left (its memory reducer, a few full collections once, from about 8 s after
 * the last one). The minute from 20 s to 80 s, which holds both, is reported beside it.
 */
export const IDLE_AFTER_LOAD_FROM_MS = 20_000;
export const IDLE_SETTLE_MS = 80_000;
export const IDLE_WATCH_MS = 60_000;
export const IDLE_TIMES: IdleTimes = {
  afterLoadFromMs: IDLE_AFTER_LOAD_FROM_MS,
  settleMs: IDLE_SETTLE_MS,
  watchMs: IDLE_WATCH_MS,
};
/** A smoke run only checks that the watch works: a few seconds, not the 140 s of a judged one. */
export const SMOKE_IDLE_TIMES: IdleTimes = { settleMs: 1_000, watchMs: 3_000 };

/** One window's figures: from `fromSeconds` after the rest began, for `seconds`. */
export interface IdleWindow {
  fromSeconds: number;
  seconds: number;
  cpuMsPerSecond: number;
  commandsPerSecond: number;
}

export interface IdleBackground extends IdleWindow {
  /** The first minute after the load (IdleTimes.afterLoadFromMs), when it was watched. */
  afterLoad?: IdleWindow;
}

/** A counter of the service's /metrics (prom-client's text format), 0 when absent. */
function counter(text: string, name: string): number {
  return Number(new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text)?.[1] ?? 0);
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Sample {
  at: number;
  cpu: number;
  commands: number;
}

function between(restBegan: number, before: Sample, after: Sample): IdleWindow {
  const seconds = (after.at - before.at) / 1000;
  return {
    fromSeconds: (before.at - restBegan) / 1000,
    seconds,
    cpuMsPerSecond: ((after.cpu - before.cpu) * 1000) / seconds,
    commandsPerSecond: (after.commands - before.commands) / seconds,
  };
}

/**
 * Rests `settleMs` with no request, then watches the service for `watchMs`; a string says why it
 * could not. The reads of /metrics are the only requests (each a command-free GET: not
 * subtracted).
 */
export async function idleBackground(
  ask: Ask,
  { afterLoadFromMs, settleMs = 0, watchMs }: Partial<IdleTimes> & { watchMs: number },
): Promise<IdleBackground | string> {
  const sample = async (): Promise<Sample | string> => {
    const res = await ask('service', 'GET', '/metrics', { keyless: true });
    if (res.status !== 200) return `GET /metrics answered ${res.status}`;
    return {
      at: Date.now(),
      cpu: counter(res.text, 'process_cpu_seconds_total'),
      commands: counter(res.text, 'mongodb_commands_total'),
    };
  };
  const restBegan = Date.now();
  let early: Sample | undefined;
  if (afterLoadFromMs !== undefined && afterLoadFromMs < settleMs) {
    await pause(afterLoadFromMs);
    const read = await sample();
    if (typeof read === 'string') return read;
    early = read;
  }
  await pause(restBegan + settleMs - Date.now());
  const before = await sample();
  if (typeof before === 'string') return before;
  await pause(watchMs);
  const after = await sample();
  if (typeof after === 'string') return after;
  return {
    ...between(restBegan, before, after),
    ...(early && { afterLoad: between(restBegan, early, before) }),
  };
}
