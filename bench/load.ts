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

const specPath = process.argv[2];
if (!specPath) throw new Error('usage: load.js <spec.json>');
const spec = JSON.parse(readFileSync(specPath, 'utf8')) as LoadSpec;

const withSeq = (template: string, n: number): string => template.replaceAll('%SEQ%', String(n));

/** Builds each request of one variant; its counter runs on across the warm-up and the rounds. */
function requests(variant: LoadVariant): (req: autocannon.Request) => autocannon.Request {
  const { method, paths, body, headers = {} } = variant.request;
  let seq = 1;
  return (req) => {
    const n = seq++;
    const perRequest: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) perRequest[name] = withSeq(value, n);
    return {
      ...req,
      method,
      path: withSeq(paths[n % paths.length] ?? '', n),
      body: body === undefined ? undefined : withSeq(body, n),
      headers: { ...req.headers, ...perRequest },
    };
  };
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
  const { method, paths, body } = variant.request;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: variant.url,
        connections: spec.connections,
        duration: seconds,
        timeout: spec.timeout,
        headers: {
          ...spec.headers,
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
  const cpuBefore = cpuNow(variant.pid);
  const started = process.hrtime.bigint();
  const result = await run(variant, setupRequest, spec.seconds, (statusCode, ms) => {
    latencies.push(ms);
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuAfter = cpuNow(variant.pid);

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
