'use strict';
// One load scenario, run in its own process so the load generator does not share an event loop
// (or a CPU-time measurement) with the harness. Usage: node bench/load.js <spec.json>
// The spec: { url, connections, duration, warmup, timeout, headers, request: { method, paths, body } }.
// `%SEQ%` in a path or body is replaced by a per-request counter (unique values for writes).
// Prints one JSON result on stdout.
const { readFileSync } = require('node:fs');
const autocannon = require('autocannon');

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { method, paths, body } = spec.request;
let seq = 1;

function nextRequest(req) {
  const n = seq++;
  const path = paths[n % paths.length].replaceAll('%SEQ%', String(n));
  return {
    ...req,
    method,
    path,
    body: body === undefined ? undefined : body.replaceAll('%SEQ%', String(n)),
  };
}

function run(seconds, record) {
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

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)];
}

async function main() {
  if (spec.warmup > 0) await run(spec.warmup);

  const latencies = [];
  const statusCodes = {};
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
  const output = {
    responses,
    seconds,
    requestsPerSecond: responses / seconds,
    latencyMs: {
      mean: responses ? latencies.reduce((sum, v) => sum + v, 0) / responses : null,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: responses ? latencies[responses - 1] : null,
    },
    statusCodes,
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
