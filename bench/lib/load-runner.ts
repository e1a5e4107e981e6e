// One request checked once (the probe) and one bounded load on one server, in a load process of
// its own (bench/load.ts). Used by the scenario runs and by the comparisons' rounds alike.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, problemOf, routeMissing, type ApiResponse } from './api';
import { RESULTS, ROOT } from './paths';
import { spawnTracked, startRssSampler, stopChild, waitForExit, waitForQuiet } from './processes';
import type { ScenarioRequest } from './scenarios';
import type { Target } from './servers';
import type { LoadOutput, LoadResult, LoadSpec } from './types';

/** What every load shares within one benchmark. */
export interface LoadSettings {
  /** Where the load specs are written. */
  tmp: string;
  connections: number;
  quietMaxMs: number;
  /** The key of every request. */
  key: string;
  /** The processes that must be idle before a load starts (servers and an embedded database). */
  busyPids: () => (number | undefined)[];
  /** An embedded database server's processes, whose CPU time is reported too. */
  databasePids: number[];
}

export interface Probe {
  response: ApiResponse;
  /** The route answers 404 ROUTE_NOT_FOUND: this build does not have it. */
  missing: boolean;
  problems: string[];
}

/** A header set of the request with `%SEQ%` = n. */
function headersAt(request: ScenarioRequest, n: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {}))
    headers[name] = value.replaceAll('%SEQ%', String(n));
  return headers;
}

/** Sends the request once with `%SEQ%` = 0 and checks the answer (status, then `verify`). */
export async function probe(target: Target, request: ScenarioRequest, key: string): Promise<Probe> {
  const response = await call(
    target.url,
    request.method,
    (request.paths[0] ?? '').replaceAll('%SEQ%', '0'),
    {
      key: request.keyless ? undefined : (request.keys?.[0] ?? key),
      rawBody: request.body?.replaceAll('%SEQ%', '0'),
      headers: headersAt(request, 0),
    },
  );
  const problems: string[] = [];
  const expected =
    request.expectStatus === undefined
      ? response.status >= 200 && response.status <= 299
      : response.status === request.expectStatus;
  if (!expected) {
    const { code, detail } = problemOf(response);
    problems.push(
      `probe answered ${response.status}${request.expectStatus ? ` (expected ${request.expectStatus})` : ''} ${code ?? ''} ${detail ?? response.text.slice(0, 200)}`.trim(),
    );
  } else {
    const problem = request.verify?.(response);
    if (problem) problems.push(`probe: ${problem}`);
  }
  return { response, missing: routeMissing(response), problems };
}

export interface LoadOutcome {
  /** The measured rounds of each variant, in the order of `variants`. */
  rounds?: LoadResult[][];
  problems: string[];
  /** The largest VmRSS of the first variant's server during the load. */
  peakRssKb: number;
  /** How long it waited in vain for the machine to settle first. */
  notQuiet?: number;
}

let loads = 0;

/**
 * Waits for the machine to settle, then runs one load process: `warmup` seconds of each variant
 * (not measured), then `rounds` rounds of `seconds` each in which the variants take turns.
 */
export async function runLoad(
  settings: LoadSettings,
  variants: { target: Target; request: ScenarioRequest }[],
  { seconds, warmup = 0, rounds = 1 }: { seconds: number; warmup?: number; rounds?: number },
): Promise<LoadOutcome> {
  const problems: string[] = [];
  const quiet = await waitForQuiet(settings.busyPids(), settings.quietMaxMs);

  const specPath = join(settings.tmp, `load-${++loads}.json`);
  const spec: LoadSpec = {
    connections: settings.connections,
    warmup,
    seconds,
    rounds,
    timeout: 10,
    headers: { 'x-api-key': settings.key },
    variants: variants.map(({ target, request }) => ({
      url: target.url,
      request: {
        method: request.method,
        paths: request.paths,
        body: request.body,
        headers: request.headers,
        keys: request.keys,
        expectStatus: request.expectStatus,
        keyless: request.keyless,
      },
      pid: target.child.pid,
      metricsUrl: target.metricsUrl,
    })),
    databasePids: settings.databasePids,
  };
  writeFileSync(specPath, JSON.stringify(spec));
  const load = spawnTracked('load', [join(__dirname, '..', 'load.js'), specPath], {
    cwd: ROOT,
    captureStdout: true,
    logPath: join(RESULTS, 'load.log'),
    env: process.env,
  });
  let stdout = '';
  load.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const sampler = startRssSampler(variants[0]?.target.child.pid);
  const budgetSeconds = variants.length * (warmup + rounds * (seconds + 1)) + 40;
  const finished = await waitForExit(load, budgetSeconds * 1000);
  const peakRssKb = sampler.stop();
  let output: LoadOutput | undefined;
  if (!finished) {
    await stopChild(load, 2_000);
    problems.push('the load generator did not finish in time');
  } else if (load.exitCode !== 0) {
    problems.push(`the load generator failed (exit ${load.exitCode}; see bench/results/load.log)`);
  } else {
    output = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as LoadOutput;
  }
  return {
    rounds: output?.variants.map((v) => v.rounds),
    problems,
    peakRssKb,
    notQuiet: quiet.quiet ? undefined : quiet.waitedMs,
  };
}

/** Milliseconds of CPU time per response, or undefined without responses. */
export function cpuMsPerResponse(cpuSeconds: number, responses: number): number | undefined {
  return responses > 0 ? (cpuSeconds * 1000) / responses : undefined;
}

/** Several loads of one request taken together (the rounds of a comparison's variant). */
export interface LoadTotals {
  responses: number;
  requestsPerSecond: number;
  meanMs: number | undefined;
  /** Server CPU time per response over all the loads, and per load. */
  cpuMs: number | undefined;
  cpuMsPerRound: (number | undefined)[];
  databaseCpuMs: number | undefined;
  /** Database commands the server sent per request it answered; undefined without its metrics. */
  commands: number | undefined;
  /** The worst round's event-loop lag p99 and max (ms), when the server reports them. */
  eventLoopLagMs: { p99: number; max: number } | undefined;
  /** Unexpected statuses, socket errors and timeouts. */
  errors: number;
  statusCodes: Record<string, number>;
}

export function sumLoads(loads: LoadResult[]): LoadTotals {
  const sum = (value: (load: LoadResult) => number): number =>
    loads.reduce((total, load) => total + value(load), 0);
  const responses = sum((l) => l.responses);
  const seconds = sum((l) => l.seconds);
  const statusCodes: Record<string, number> = {};
  for (const load of loads)
    for (const [code, count] of Object.entries(load.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count;
  return {
    responses,
    requestsPerSecond: seconds > 0 ? responses / seconds : 0,
    meanMs: responses ? sum((l) => (l.latencyMs.mean ?? 0) * l.responses) / responses : undefined,
    cpuMs: cpuMsPerResponse(
      sum((l) => l.cpu.target),
      responses,
    ),
    cpuMsPerRound: loads.map((l) => cpuMsPerResponse(l.cpu.target, l.responses)),
    databaseCpuMs: cpuMsPerResponse(
      sum((l) => l.cpu.database),
      responses,
    ),
    commands:
      loads.every((l) => l.commands !== undefined && l.served !== undefined) &&
      sum((l) => l.served ?? 0) > 0
        ? sum((l) => l.commands ?? 0) / sum((l) => l.served ?? 0)
        : undefined,
    eventLoopLagMs: loads.every((l) => l.eventLoopLagMs)
      ? {
          p99: Math.max(...loads.map((l) => l.eventLoopLagMs?.p99 ?? 0)),
          max: Math.max(...loads.map((l) => l.eventLoopLagMs?.max ?? 0)),
        }
      : undefined,
    errors: sum((l) => l.unexpected + l.errors),
    statusCodes,
  };
}
