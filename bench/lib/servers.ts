// The servers a benchmark puts load on: the built service (as production runs it, plus two more
// instances with metrics on and off for the metrics comparison) and the baseline, all on one
// database.
import { join } from 'node:path';
import { childPort, portForChild } from '../../tools/dev-database';
import { RESULTS, ROOT, SERVICE_DIST } from './paths';
import { spawnTracked, waitForHttpOk, type TrackedChild } from './processes';
import type { TargetName } from './scenarios';

/** Slow queries are measured, not cut off: the baseline has no time limit either. */
export const QUERY_TIMEOUT_MS = 60_000;

export interface Target {
  name: TargetName;
  url: string;
  child: TrackedChild;
  /** Where its metrics are (database commands, event-loop lag); unset when it has none. */
  metricsUrl?: string;
}

export interface ServiceOptions {
  name: Extract<TargetName, `service${string}`>;
  databaseUri: string;
  dbName: string;
  adminKey: string;
  /** METRICS_ENABLED: set explicitly, so that the caller's environment cannot switch it. */
  metrics: boolean;
  /** EVENTS_ENABLED (default on). */
  events?: boolean;
  /** Node options before the script (the profiler's --cpu-prof). */
  nodeArgs?: string[];
  /** More environment (DATA_CLUSTERS). */
  env?: Record<string, string>;
}

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

export async function startService({
  name,
  databaseUri,
  dbName,
  adminKey,
  metrics,
  events = true,
  nodeArgs = [],
  env = {},
}: ServiceOptions): Promise<Target> {
  const given = await portForChild();
  const logFile = `${name}.log`;
  const child = spawnTracked(name, [...nodeArgs, join(SERVICE_DIST, 'main.js')], {
    cwd: ROOT,
    logPath: join(RESULTS, logFile),
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(given),
      ADMIN_API_KEY: adminKey,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '1000000000',
      QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      METRICS_ENABLED: String(metrics),
      EVENTS_ENABLED: String(events),
      // The fan-out's 100 SSE clients share the bench user's key: the per-key and per-instance
      // stream limits (10, 200) would be what it measures.
      EVENTS_MAX_STREAMS_PER_KEY: '1000',
      EVENTS_MAX_STREAMS: '1000',
      // Later instances find the indexes built by the first.
      ...(name === 'service' ? {} : { SYNC_INDEXES: 'false' }),
      MONGODB_URI: databaseUri,
      MONGODB_DB_NAME: dbName,
      ...env,
    },
  });
  const url = `http://127.0.0.1:${(await childPort(child, given, 60_000)) ?? given}`;
  try {
    await waitForHttpOk(`${url}/health/ready`, child, 60_000);
  } catch (error) {
    throw new Error(`${messageOf(error)} (its output: bench/results/${logFile})`);
  }
  return { name, url, child, ...(metrics ? { metricsUrl: `${url}/metrics` } : {}) };
}

export interface BaselineOptions {
  /** Node options before the script (the profiler's --cpu-prof). */
  nodeArgs?: string[];
  /**
   * `baseline-uncached`: the baseline as it was before its key cache (BASELINE_KEY_CACHE_MS=0,
   * the key read on every request), reported next to the current one. `baseline-nest`: the
   * framework floor, the baseline's GET by _id and POST on NestJS (baseline-nest.ts).
   */
  name?: Extract<TargetName, `baseline${string}`>;
}

export async function startBaseline(
  databaseUri: string,
  dbName: string,
  collections: Record<string, unknown>,
  { nodeArgs = [], name = 'baseline' }: BaselineOptions = {},
): Promise<Target> {
  const given = await portForChild();
  const script = name === 'baseline-nest' ? 'baseline-nest.js' : 'baseline.js';
  const child = spawnTracked(name, [...nodeArgs, join(__dirname, '..', script)], {
    cwd: ROOT,
    logPath: join(RESULTS, `${name}.log`),
    env: {
      ...process.env,
      PORT: String(given),
      MONGODB_URI: databaseUri,
      MONGODB_DB_NAME: dbName,
      BASELINE_COLLECTIONS: JSON.stringify(collections),
      ...(name === 'baseline-uncached' ? { BASELINE_KEY_CACHE_MS: '0' } : {}),
    },
  });
  const url = `http://127.0.0.1:${(await childPort(child, given, 60_000)) ?? given}`;
  await waitForHttpOk(`${url}/health`, child, 30_000);
  return { name, url, child, metricsUrl: `${url}/metrics` };
}
