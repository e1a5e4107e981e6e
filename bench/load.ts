// One load scenario, run in its own process so the load generator does not share an event loop
// (or a CPU-time measurement) with the harness. Usage: node dist-dev/bench/load.js <spec.json>
// The spec is a LoadSpec (lib/types.ts). `%SEQ%` in a path or body is replaced by a per-request
// counter (unique values for writes). Prints one JSON LoadResult on stdout.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from './lib/types';

const specPath = process.argv[2];
if (!specPath) throw new Error('usage: load.js <spec.json>');
const spec = JSON.parse(readFileSync(specPath, 'utf8')) as LoadSpec;
const { method, paths, body } = spec.request;
let seq = 1;

function nextRequest(req: autocannon.Request): autocannon.Request {
  const n = seq++;
  const path = (paths[n % paths.length] ?? '').replaceAll('%SEQ%', String(n));
  return {
    ...req,
    method,
    path,
    body: body === undefined ? undefined : body.replaceAll('%SEQ%', String(n)),
  };
}

function run(
  seconds: number,
  record?: (statusCode: number, ms: number) => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: seconds,
        timeout: spec.timeout,
        headers: {
          ...spec.headers,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        requests: [{ method, path: paths[0], setupRequest: nextRequest }],
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

async function main(): Promise<void> {
  if (spec.warmup > 0) await run(spec.warmup);

  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const started = process.hrtime.bigint();
  const result = await run(spec.duration, (statusCode, ms) => {
    latencies.push(ms);
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;

  latencies.sort((a, b) => a - b);
  const responses = latencies.length;
  const non2xx = Object.entries(statusCodes)
    .filter(([code]) => !code.startsWith('2'))
    .reduce((sum, [, count]) => sum + count, 0);
  const output: LoadResult = {
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
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
