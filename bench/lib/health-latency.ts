// /health latency while hostile writes are validated (issue 44: "While any one request validates,
// /health on that instance answers within 100 ms"). For each kind of hostile POST /data/{c}, a
// few such requests one after the other while /health is polled, one poll at a time 10 ms apart,
// from a process that does nothing else; the polls' latencies are the figures. Part of every
// comparisons run and of `--schema-only`; `--health-only` runs it alone.
import { Agent, request } from 'node:http';
import { cpuSecondsOf } from './processes';
import type { Target } from './servers';
import type { Check } from './types';

/** The bound of the issue: /health answers within this while one request validates. */
export const HEALTH_MAX_MS = 100;
/** The pause between one poll's answer and the next poll. */
export const HEALTH_POLL_MS = 10;

export type HealthCaseId = 'unique-90k' | 'unique-10k' | 'check-budget' | 'plain-90k';

interface HealthCase {
  id: HealthCaseId;
  label: string;
  collection: string;
  /** The collection's schema (action `error`); none: a collection without one. */
  schema?: unknown;
  item: () => Record<string, unknown>;
  /** What every such POST must answer. */
  expect: { status: number; code?: string };
}

/**
 * `count` distinct five-digit numbers, out of order (7,919 is prime to 90,000, so the first 90,000
 * are all of them): 90,000 make the issue's 540 KB item.
 */
const numbers = (count: number): number[] =>
  Array.from({ length: count }, (_, i) => 10_000 + ((i * 7_919) % 90_000));

const UNIQUE = { properties: { a: { type: 'array', uniqueItems: true } } };
/**
 * Within every static limit (a few nodes), but each element is compared with 5,000 enum members:
 * 4,000 elements take the better part of a second, so the check runs into SCHEMA_CHECK_MAX_MS
 * (as in test/e2e/collection-schema-limits.e2e-spec.ts).
 */
const COSTLY = {
  properties: {
    a: {
      items: {
        allOf: Array.from({ length: 5 }, () => ({
          enum: Array.from({ length: 1000 }, (_, i) => ({ k: i })),
        })),
      },
    },
  },
};

export const HEALTH_CASES: readonly HealthCase[] = [
  {
    id: 'unique-90k',
    label: '90,000 numbers (540 KB) under uniqueItems',
    collection: 'bench_health_unique',
    schema: UNIQUE,
    item: () => ({ a: numbers(90_000) }),
    expect: { status: 200 },
  },
  {
    id: 'unique-10k',
    label: '10,000 numbers under uniqueItems',
    collection: 'bench_health_unique',
    schema: UNIQUE,
    item: () => ({ a: numbers(10_000) }),
    expect: { status: 200 },
  },
  {
    id: 'check-budget',
    label: 'a check stopped at SCHEMA_CHECK_MAX_MS (4,000 elements × 5,000 enum members)',
    collection: 'bench_health_costly',
    schema: COSTLY,
    item: () => ({ a: Array.from({ length: 4_000 }, () => ({ k: -1 })) }),
    expect: { status: 400, code: 'SCHEMA_TOO_COMPLEX' },
  },
  {
    id: 'plain-90k',
    label: '90,000 numbers (540 KB), no schema',
    collection: 'bench_health_plain',
    item: () => ({ a: numbers(90_000) }),
    expect: { status: 200 },
  },
];

export interface HealthLeg {
  id: HealthCaseId;
  label: string;
  bodyBytes: number;
  posts: number;
  /** Each measured POST's time to its answer, ms. */
  postMs: number[];
  /** The service's CPU time (all its threads: GC included) per measured POST, ms. */
  cpuMsPerPost: number;
  polls: number;
  /** Poll latencies, ms. */
  p50: number;
  p99: number;
  max: number;
  /** POSTs (the warm-up included) answered otherwise than intended, e.g. `2 × 400 SCHEMA_TOO_COMPLEX`. */
  unexpected: string[];
  /** Polls that failed or were not answered 200. */
  problems: string[];
}

export interface HealthRun {
  /** Measured POSTs per case (after one that warms the instance up). */
  posts: number;
  legs: HealthLeg[];
  /** Set when the set-up failed (no data or schema routes in this build). */
  missing?: string;
}

interface Reply {
  status: number;
  /** The problem's code, when the answer is no 200 (a 200's body is not read). */
  code?: string;
}

/**
 * One request with node:http. A 200's body (the item, as large as the request's) is drained
 * without being parsed: parsing it here would hold this process's event loop, and with it the
 * polls' timing.
 */
function send(
  url: URL,
  method: string,
  path: string,
  { key, agent, body }: { key?: string; agent?: Agent; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        agent: agent ?? false,
        headers: {
          ...(key ? { 'x-api-key': key } : {}),
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
        },
        timeout: 60_000,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status === 200) {
          res.resume();
          res.on('end', () => resolve({ status }));
          res.on('error', reject);
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let code: string | undefined;
          try {
            const parsed = JSON.parse(text) as { code?: unknown };
            if (typeof parsed.code === 'string') code = parsed.code;
          } catch {
            // No problem body: the status alone is reported.
          }
          resolve({ status, code });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `work` while /health is polled; answers the polls' latencies. */
async function pollHealthWhile(
  url: URL,
  work: () => Promise<void>,
): Promise<{ polls: number[]; failed: string[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const polls: number[] = [];
  const failed: string[] = [];
  let done = false;
  const polling = (async () => {
    while (!done) {
      const started = performance.now();
      try {
        const health = await send(url, 'GET', '/health', { agent });
        polls.push(performance.now() - started);
        if (health.status !== 200) failed.push(`/health answered ${health.status}`);
      } catch (error) {
        failed.push(`/health failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      await sleep(HEALTH_POLL_MS);
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await polling;
    agent.destroy();
  }
  return { polls, failed };
}

async function setUp(url: URL, key: string): Promise<string | undefined> {
  const seen = new Set<string>();
  for (const c of HEALTH_CASES) {
    if (seen.has(c.collection)) continue;
    seen.add(c.collection);
    // The collection exists before its schema is set (a first item creates it).
    const created = await send(url, 'POST', `/data/${c.collection}`, {
      key,
      body: JSON.stringify({ item: { a: [1] } }),
    });
    if (created.status !== 200)
      return `POST /data/${c.collection} answered ${created.status} ${created.code ?? ''}`.trim();
    if (c.schema === undefined) continue;
    const set = await send(url, 'PUT', `/data/${c.collection}/schema`, {
      key,
      body: JSON.stringify({ schema: c.schema, action: 'error' }),
    });
    if (set.status !== 200)
      return `PUT /data/${c.collection}/schema answered ${set.status} ${set.code ?? ''}`.trim();
  }
  return undefined;
}

/**
 * Every case: one POST that warms the instance up (the schema's compile, the code paths'
 * optimisation), then `posts` POSTs one after the other while /health is polled.
 */
export async function healthLatency(
  service: Target,
  key: string,
  { posts, log }: { posts: number; log: (message: string) => void },
): Promise<HealthRun> {
  const url = new URL(service.url);
  const missing = await setUp(url, key);
  if (missing) return { posts, legs: [], missing };
  const legs: HealthLeg[] = [];
  for (const c of HEALTH_CASES) {
    const body = JSON.stringify({ item: c.item() });
    const unexpected = new Map<string, number>();
    const check = (reply: Reply): void => {
      if (reply.status === c.expect.status && (!c.expect.code || reply.code === c.expect.code))
        return;
      const answer = `${reply.status}${reply.code ? ` ${reply.code}` : ''}`;
      unexpected.set(answer, (unexpected.get(answer) ?? 0) + 1);
    };
    check(await send(url, 'POST', `/data/${c.collection}`, { key, body }));
    const postMs: number[] = [];
    const cpuBefore = cpuSecondsOf(service.child.pid);
    const { polls, failed } = await pollHealthWhile(url, async () => {
      for (let i = 0; i < posts; i += 1) {
        const started = performance.now();
        check(await send(url, 'POST', `/data/${c.collection}`, { key, body }));
        postMs.push(performance.now() - started);
      }
    });
    const cpuMsPerPost = ((cpuSecondsOf(service.child.pid) - cpuBefore) * 1000) / posts;
    const sorted = [...polls].sort((a, b) => a - b);
    const leg: HealthLeg = {
      id: c.id,
      label: c.label,
      bodyBytes: Buffer.byteLength(body),
      posts,
      postMs,
      cpuMsPerPost,
      polls: polls.length,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.at(-1) ?? 0,
      unexpected: [...unexpected].map(([answer, count]) => `${count} × ${answer}`),
      problems: [...new Set(failed)],
    };
    legs.push(leg);
    log(
      `  ${c.label}: ${leg.polls} polls, /health p50 ${leg.p50.toFixed(1)} ms, p99 ${leg.p99.toFixed(1)} ms, max ${leg.max.toFixed(1)} ms; POST ${Math.min(...postMs).toFixed(0)}–${Math.max(...postMs).toFixed(0)} ms, ${cpuMsPerPost.toFixed(0)} CPU ms each${[...leg.unexpected, ...leg.problems].map((p) => ` ⚠ ${p}`).join('')}`,
    );
  }
  return { posts, legs };
}

/**
 * That every POST was answered as intended (a uniqueItems check stopped by SCHEMA_CHECK_MAX_MS on
 * a busy machine measures less than the case is about), then one check per case: the slowest
 * poll under HEALTH_MAX_MS. In smoke mode (a CI machine busy with other work) the latency is
 * reported, not judged, and so is a check stopped by its budget; any other answer still fails.
 */
export function healthChecks(run: HealthRun | undefined, smoke: boolean): Check[] {
  if (!run) return [];
  if (run.missing)
    return [
      {
        name: `/health answers within ${HEALTH_MAX_MS} ms while hostile writes are validated`,
        status: 'FAIL',
        detail: `not set up: ${run.missing}`,
      },
    ];
  const off = run.legs.filter((leg) => leg.unexpected.length > 0);
  const stoppedOnly = off.every((leg) =>
    leg.unexpected.every((answer) => answer.endsWith(' 400 SCHEMA_TOO_COMPLEX')),
  );
  const answered: Check = {
    name: 'Every hostile POST answered as intended (200; 400 SCHEMA_TOO_COMPLEX for the stopped check)',
    status: off.length === 0 ? 'PASS' : smoke && stoppedOnly ? 'n/a' : 'FAIL',
    detail: off.length
      ? off.map((leg) => `${leg.label}: ${leg.unexpected.join(', ')}`).join('<br>')
      : `${run.legs.reduce((sum, leg) => sum + leg.posts + 1, 0)} POSTs`,
  };
  const latency = run.legs.map((leg): Check => {
    const name = `/health max < ${HEALTH_MAX_MS} ms during POSTs of ${leg.label}`;
    const figures = `max ${leg.max.toFixed(1)} ms over ${leg.polls} polls (p50 ${leg.p50.toFixed(1)}, p99 ${leg.p99.toFixed(1)})${leg.unexpected.length ? `; answered ${leg.unexpected.join(', ')}` : ''}`;
    if (leg.problems.length > 0 || leg.polls === 0)
      return {
        name,
        status: 'FAIL',
        detail: leg.problems.join('; ') || 'no poll was answered',
      };
    if (smoke) return { name, status: 'n/a', detail: `${figures}; not judged in smoke mode` };
    return { name, status: leg.max < HEALTH_MAX_MS ? 'PASS' : 'FAIL', detail: figures };
  });
  return [answered, ...latency];
}

const kb = (bytes: number): string => `${Math.round(bytes / 1000).toLocaleString('en-US')} KB`;

export function healthMarkdown(run: HealthRun | undefined, checkList: Check[]): string {
  if (!run) return '';
  const lines = [
    '## /health latency while hostile writes are validated',
    '',
    `For each kind of hostile \`POST /data/{c}\`: one POST that warms the instance up, then ${run.posts} one after the other while \`GET /health\` is polled from the harness, one poll at a time, ${HEALTH_POLL_MS} ms after the previous answer (keep-alive). The figures are the polls' latencies; the bound (issue 44) is ${HEALTH_MAX_MS} ms. The schemas are enforced (action \`error\`); SCHEMA_CHECK_MAX_MS is the default.`,
    '',
    '| Check | Result | Numbers |',
    '| --- | --- | --- |',
    ...checkList.map((c) => `| ${c.name} | ${c.status} | ${c.detail} |`),
  ];
  if (run.missing) return [...lines, '', `Not set up: ${run.missing}.`, ''].join('\n');
  lines.push(
    '',
    '| POST | body | answer | POSTs | POST ms (min–max) | service CPU ms/POST | polls | /health p50 ms | p99 ms | max ms |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const leg of run.legs) {
    const c = HEALTH_CASES.find((x) => x.id === leg.id);
    const answer = c ? `${c.expect.status}${c.expect.code ? ` ${c.expect.code}` : ''}` : '—';
    lines.push(
      `| ${leg.label} | ${kb(leg.bodyBytes)} | ${answer} | ${leg.posts} | ${Math.min(...leg.postMs).toFixed(0)}–${Math.max(...leg.postMs).toFixed(0)} | ${leg.cpuMsPerPost.toFixed(0)} | ${leg.polls} | ${leg.p50.toFixed(1)} | ${leg.p99.toFixed(1)} | ${leg.max.toFixed(1)} |`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

export function healthSummary(run: HealthRun | undefined, checkList: Check[]): string {
  if (!run) return '';
  return `\n/health during hostile writes:\n${checkList.map((c) => `  ${c.status.padEnd(4)} ${c.name}: ${c.detail}`).join('\n')}\n`;
}
