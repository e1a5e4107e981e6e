// Child processes of the harness (service, baseline, load generators): started through one
// function so that every one of them is stopped on success, failure and Ctrl-C alike.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';

export interface TrackedChild extends ChildProcess {
  benchName: string;
}

export interface SpawnOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  logPath?: string;
  captureStdout?: boolean;
}

const children = new Set<TrackedChild>();

/** Spawns a child that stopAll() will stop; stdout/stderr go to `logPath` unless captured. */
export function spawnTracked(
  name: string,
  args: string[],
  { env, cwd, logPath, captureStdout = false }: SpawnOptions,
): TrackedChild {
  const child = Object.assign(
    spawn(process.execPath, args, {
      env,
      cwd,
      stdio: ['ignore', captureStdout || logPath ? 'pipe' : 'ignore', logPath ? 'pipe' : 'inherit'],
    }),
    { benchName: name },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (logPath) {
    const log = createWriteStream(logPath, { flags: 'a' });
    if (!captureStdout) child.stdout?.pipe(log);
    child.stderr?.pipe(log);
  }
  return child;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM (the service finishes in-flight requests), then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (exited(child)) return;
  child.kill('SIGTERM');
  if (!(await waitForExit(child, graceMs))) {
    child.kill('SIGKILL');
    await waitForExit(child, 2_000);
  }
}

export function stopAll(): Promise<void[]> {
  return Promise.all([...children].map((child) => stopChild(child)));
}

export interface Memory {
  rssKb: number;
  hwmKb: number;
}

/** Kilobytes of VmRSS and VmHWM (peak) of a live process; undefined once it is gone. */
export function memoryOf(pid: number | undefined): Memory | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string): number =>
      Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
  } catch {
    return undefined;
  }
}

/**
 * Polls VmRSS of `pid` while a scenario runs. VmHWM is the peak over the whole life of the
 * process, so a per-scenario peak has to be sampled.
 */
export function startRssSampler(pid: number | undefined, intervalMs = 50): { stop(): number } {
  let peakKb = memoryOf(pid)?.rssKb ?? 0;
  const timer = setInterval(() => {
    const memory = memoryOf(pid);
    if (memory && memory.rssKb > peakKb) peakKb = memory.rssKb;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const memory = memoryOf(pid);
      if (memory && memory.rssKb > peakKb) peakKb = memory.rssKb;
      return peakKb;
    },
  };
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once GET `url` answers 200; rejects when `child` exits first or on timeout. */
export async function waitForHttpOk(
  url: string,
  child: TrackedChild,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited(child)) {
      throw new Error(
        `${child.benchName} exited with ${child.exitCode ?? child.signalCode} before ${url} was ready`,
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms`);
}

// USER_HZ, 100 on every Linux architecture Node runs on.
const CLOCK_TICKS = 100;

/** CPU seconds (user + system, all its threads) a process has used; 0 once it is gone. */
export function cpuSecondsOf(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** Processes started by this one that are not tracked children (the embedded database server). */
export function untrackedChildPids(): number[] {
  const own = new Set([...children].map((c) => c.pid));
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && !own.has(Number(entry))) pids.push(Number(entry));
    } catch {
      // Exited while listing.
    }
  }
  return pids;
}

/**
 * Waits until the given processes (service, baseline, database) are nearly idle. A load
 * generator that stops at its deadline abandons requests still in flight, and the service and
 * database keep working on them; on a slow database that work would otherwise be billed to the
 * next scenario. Other processes on the machine are not looked at. Returns how long it waited.
 */
export async function waitForQuiet(
  pids: (number | undefined)[],
  maxMs: number,
  busyCores = 0.1,
  windowMs = 250,
): Promise<{ waitedMs: number; quiet: boolean }> {
  const started = Date.now();
  const total = (): number => pids.reduce((sum: number, pid) => sum + cpuSecondsOf(pid), 0);
  let previous = total();
  while (Date.now() - started < maxMs) {
    await sleep(windowMs);
    const now = total();
    const busy = (now - previous) / (windowMs / 1000);
    previous = now;
    if (busy < busyCores) return { waitedMs: Date.now() - started, quiet: true };
  }
  return { waitedMs: Date.now() - started, quiet: false };
}
