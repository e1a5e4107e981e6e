// The load generator, run in its own process so that it does not share an event loop (or a
// CPU-time measurement) with the harness. Usage: node dist-dev/bench/load.js <spec.json>
// The spec is a LoadSpec (lib/types.ts): one or more variants (a server and a request), a warm-up
// of each, then rounds in which the variants take turns (A B, B A, A B, …), so that a machine
// getting busier or quieter weighs on every variant alike. `%SEQ%` in a path, body or
// per-request header value is replaced by a per-variant counter (unique values for writes and
// Idempotency-Keys). The CPU time of the server under load is read here, right around each
// measured round, so that neither this process's start nor any waiting is billed to the
// requests. Prints one JSON LoadOutput on stdout.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { cpuSecondsOf, sleep } from './lib/processes';
import type { CpuUse, LoadOutput, LoadResult, LoadSpec, LoadVariant } from './lib/types';

/** Before each round, for the requests the run before abandoned at its deadline to finish. */
const PAUSE_MS = 250;
/** How long the metrics read after a round wait for the server's requests in flight. */
const DRAIN_MS = 5_000;

const specPath = process.argv[2];
if (!specPath) throw new Error('usage: load.js <spec.json>');
const spec = JSON.parse(readFileSync(specPath, 'utf8')) as LoadSpec;

const withSeq = (template: string, n: number): string => template.replaceAll('%SEQ%', String(n));

/** Builds each request of one variant; its counter runs on across the warm-up and the rounds. */
function requests(variant: LoadVariant): (req: autocannon.Request) => autocannon.Request {
  const { method, paths, body, headers = {}, keys } = variant.request;
  let seq = 1;
  return (req) => {
    const n = seq++;
    const perRequest: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) perRequest[name] = withSeq(value, n);
    const key = keys?.[n % keys.length];
    if (key !== undefined) perRequest['x-api-key'] = key;
    return {
      ...req,
      method,
      path: withSeq(paths[n % paths.length] ?? '', n),
      body: body === undefined ? undefined : withSeq(body, n),
      headers: { ...req.headers, ...perRequest },
    };
  };
}

interface ServerMetrics {
  commands?: number;
  /** Requests the server has answered (its own count; scrapes are not counted). */
  served?: number;
  inFlight?: number;
  lag?: { p50: number; p99: number; max: number };
}

/** The server's metrics of interest, or undefined without a metrics URL (or an answer). */
async function metricsNow(url: string | undefined): Promise<ServerMetrics | undefined> {
  if (!url) return undefined;
  try {
    const res = await fetch(url);
    if (!res.ok) return undefined;
    const text = await res.text();
    /** The sum of a metric's series (one unlabelled series, or all of its labelled ones). */
    const value = (name: string): number | undefined => {
      let sum: number | undefined;
      for (const match of text.matchAll(
        new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'gm'),
      ))
        sum = (sum ?? 0) + Number(match[1]);
      return sum;
    };
    const [p50, p99, max] = ['p50', 'p99', 'max'].map((q) =>
      value(`nodejs_eventloop_lag_${q}_seconds`),
    );
    return {
      commands: value('mongodb_commands_total'),
      served: value('http_requests_total'),
      inFlight: value('http_requests_in_flight'),
      lag:
        p50 !== undefined && p99 !== undefined && max !== undefined
          ? { p50: p50 * 1000, p99: p99 * 1000, max: max * 1000 }
          : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * The server's metrics once the requests the load abandoned at its deadline are answered (their
 * commands are counted, so they must be in the request count too); at most `DRAIN_MS`.
 */
async function metricsDrained(url: string | undefined): Promise<ServerMetrics | undefined> {
  const deadline = Date.now() + DRAIN_MS;
  for (;;) {
    const metrics = await metricsNow(url);
    if (!metrics || !metrics.inFlight || Date.now() > deadline) return metrics;
    await sleep(20);
  }
}

function cpuNow(pid: number | undefined): CpuUse {
  return {
    target: cpuSecondsOf(pid),
    database: spec.databasePids.reduce((sum, dbPid) => sum + cpuSecondsOf(dbPid), 0),
  };
}

function run(
  variant: LoadVariant,
  setupRequest: (req: autocannon.Request) => autocannon.Request,
  seconds: number,
  record?: (statusCode: number, ms: number) => void,
): Promise<autocannon.Result> {
  const { method, paths, body, keyless = false } = variant.request;
  // A request that authenticates with an access token must not send the key: a key wins.
  const common = keyless
    ? Object.fromEntries(Object.entries(spec.headers).filter(([name]) => name !== 'x-api-key'))
    : spec.headers;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: variant.url,
        connections: spec.connections,
        duration: seconds,
        timeout: spec.timeout,
        headers: {
          ...common,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        requests: [{ method, path: paths[0], setupRequest }],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    // autocannon's own histogram keeps whole milliseconds; sub-millisecond latencies matter here.
    if (record)
      instance.on('response', (_client, statusCode, _bytes, ms) => record(statusCode, ms));
  });
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? null;
}

/** One measured round of one variant. */
async function measure(
  variant: LoadVariant,
  setupRequest: (req: autocannon.Request) => autocannon.Request,
): Promise<LoadResult> {
  const { expectStatus } = variant.request;
  const expected = (code: string): boolean =>
    expectStatus === undefined ? code.startsWith('2') : code === String(expectStatus);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  // Read first: reading resets the event-loop lag statistics, so the round's are read after it.
  const metricsBefore = await metricsNow(variant.metricsUrl);
  const cpuBefore = cpuNow(variant.pid);
  const started = process.hrtime.bigint();
  const result = await run(variant, setupRequest, spec.seconds, (statusCode, ms) => {
    latencies.push(ms);
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuAfter = cpuNow(variant.pid);
  const metricsAfter = await metricsDrained(variant.metricsUrl);
  const counted = (m: ServerMetrics | undefined) =>
    m?.commands !== undefined && m.served !== undefined ? m : undefined;
  const countsBefore = counted(metricsBefore);
  const countsAfter = counted(metricsAfter);

  latencies.sort((a, b) => a - b);
  const responses = latencies.length;
  return {
    responses,
    seconds,
    requestsPerSecond: responses / seconds,
    latencyMs: {
      mean: responses ? latencies.reduce((sum, v) => sum + v, 0) / responses : null,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: responses ? (latencies[responses - 1] ?? null) : null,
    },
    statusCodes,
    unexpected: Object.entries(statusCodes)
      .filter(([code]) => !expected(code))
      .reduce((sum, [, count]) => sum + count, 0),
    errors: result.errors,
    timeouts: result.timeouts,
    cpu: {
      target: cpuAfter.target - cpuBefore.target,
      database: cpuAfter.database - cpuBefore.database,
    },
    ...(countsBefore && countsAfter
      ? {
          commands: (countsAfter.commands ?? 0) - (countsBefore.commands ?? 0),
          served: (countsAfter.served ?? 0) - (countsBefore.served ?? 0),
        }
      : {}),
    ...(metricsAfter?.lag ? { eventLoopLagMs: metricsAfter.lag } : {}),
  };
}

async function main(): Promise<void> {
  const variants = spec.variants.map((variant) => ({ variant, setup: requests(variant) }));
  if (spec.warmup > 0)
    for (const { variant, setup } of variants) await run(variant, setup, spec.warmup);

  const output: LoadOutput = { variants: variants.map(() => ({ rounds: [] })) };
  for (let round = 1; round <= spec.rounds; round++) {
    const order = variants.map((_, i) => i);
    if (round % 2 === 0) order.reverse();
    for (const i of order) {
      const entry = variants[i];
      if (!entry) continue;
      await sleep(PAUSE_MS);
      output.variants[i]?.rounds.push(await measure(entry.variant, entry.setup));
    }
  }
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
