// `npm run bench:profile`: where the service spends its CPU on the hot paths. Starts the built
// service under `node --cpu-prof` once per scenario (GET item by _id, a filtered list, POST an
// item) on a small collection, loads it with autocannon for a few seconds after a warm-up, stops
// it (the profile is written at exit), and reports the samples taken during the load only: self
// time by area (the service's modules, each dependency, Node.js, GC) and the heaviest functions,
// self and inclusive. Writes bench/results/profile.md and the .cpuprofile files beside it (open
// them in Chrome DevTools or speedscope). See docs/benchmarks.md, "Profiling".
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, sep } from 'node:path';
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { loadDatabaseSettings, resolveDatabase } from '../tools/dev-database';
import { call, expectStatus } from './lib/api';
import { CONCERNS, concernOf, type Frame } from './lib/concerns';
import { RESULTS, ROOT } from './lib/paths';
import { stopAll, stopChild } from './lib/processes';
import {
  itemPost,
  itemsById,
  scenarios,
  SAMPLE_PATHS,
  type ScenarioRequest,
} from './lib/scenarios';
import { itemId, itemTemplate, seedItems, setupItems } from './lib/seed';
import { startBaseline, startService, type Target } from './lib/servers';

const ITEMS = 200;
const CONNECTIONS = 10;
const WARMUP_S = 3;
const LOAD_S = Number(process.env.PROFILE_SECONDS ?? 10);
const TOP = 25;

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const log = (message: string): void => {
  process.stdout.write(`${message}\n`);
};

/** Where a frame's code lives: a service module, a dependency, Node.js itself, or V8's own. */
function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:*';
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf(`node_modules${sep}`);
  if (modules >= 0) {
    const rest = path.slice(modules + 'node_modules/'.length).split(sep);
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? path);
  }
  if (path.endsWith(`${sep}baseline.js`)) return 'baseline';
  const dist = relative(join(ROOT, 'dist'), path);
  if (!dist.startsWith('..')) return `service: ${dist.split(sep).slice(0, -1).join('/') || '.'}`;
  return path;
}

function frameLabel(frame: CallFrame): string {
  const where = frame.url
    ? `${relative(ROOT, frame.url.replace(/^file:\/\//, ''))}:${frame.lineNumber + 1}`
    : '';
  return `${frame.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
}

/** A frame's path under the service's dist/ (its own code), else undefined. */
function servicePath(url: string): string | undefined {
  if (!url || url.includes(`node_modules${sep}`)) return undefined;
  const dist = relative(join(ROOT, 'dist'), url.replace(/^file:\/\//, ''));
  return dist.startsWith('..') || dist.startsWith(sep) ? undefined : dist.split(sep).join('/');
}

interface Analysis {
  samples: number;
  ms: number;
  byArea: [string, number][];
  /** Every concern of lib/concerns.ts, in its order, with its time (µs). */
  byConcern: [string, number][];
  bySelf: [string, number][];
  byTotal: [string, number][];
}

/** Self and inclusive time of the samples taken between `from` and `to` (µs, monotonic). */
function analyse(profile: CpuProfile, from: number, to: number): Analysis {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const area = new Map<string, number>();
  const concern = new Map<string, number>(CONCERNS.map(([name]) => [name, 0]));
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let at = profile.startTime;
  let kept = 0;
  let keptUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < from || at > to) continue;
    const id = profile.samples[i];
    const node = id === undefined ? undefined : nodes.get(id);
    if (!node || node.callFrame.functionName === '(idle)') continue;
    kept++;
    keptUs += delta;
    const add = (map: Map<string, number>, key: string) =>
      map.set(key, (map.get(key) ?? 0) + delta);
    add(area, areaOf(node.callFrame));
    add(self, frameLabel(node.callFrame));
    const seen = new Set<string>();
    const stack: Frame[] = [];
    for (let n: number | undefined = node.id; n !== undefined; n = parent.get(n)) {
      const frame = nodes.get(n)?.callFrame ?? { functionName: '?', url: '', lineNumber: 0 };
      stack.push(frame);
      const label = frameLabel(frame);
      if (!seen.has(label)) {
        seen.add(label);
        add(total, label);
      }
    }
    add(concern, concernOf(stack, servicePath));
  }
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return {
    samples: kept,
    ms: keptUs / 1000,
    byArea: sorted(area),
    byConcern: [...concern],
    bySelf: sorted(self).slice(0, TOP),
    // Only the server's own functions: the dependencies' appear in their area and self time.
    byTotal: sorted(total)
      .filter(([label]) => label.includes(' dist/') || label.includes('baseline.js'))
      .slice(0, TOP),
  };
}

/**
 * The request counter behind `%SEQ%`, over all loads of a run: the warm-up's POSTs and the
 * profiled ones must not send the same unique values (a repeat would be a 409, not a create).
 */
let seq = 1;

function load(
  url: string,
  key: string,
  request: ScenarioRequest,
  seconds: number,
): Promise<number> {
  let answered = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: CONNECTIONS,
        duration: seconds,
        timeout: 10,
        headers: {
          'x-api-key': key,
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        requests: [
          {
            method: request.method,
            setupRequest: (req) => {
              const n = seq++;
              return {
                ...req,
                path: (request.paths[n % request.paths.length] ?? '').replaceAll(
                  '%SEQ%',
                  String(n),
                ),
                body: request.body?.replaceAll('%SEQ%', String(n)),
              };
            },
          },
        ],
      },
      (error) => (error ? reject(error) : resolve(answered)),
    );
    instance.on('response', (_client, status) => {
      if (status >= 200 && status < 300) answered++;
    });
  });
}

/** One profile's section of profile.md, and its summary on the console. */
function report(title: string, file: string, requests: number, analysis: Analysis): string[] {
  const perRequest = analysis.ms / Math.max(1, requests);
  log(
    `\n${title}: ${requests} requests, ${analysis.ms.toFixed(0)} ms of CPU sampled, ${perRequest.toFixed(3)} ms per request`,
  );
  for (const [area, us] of analysis.byArea.slice(0, 12))
    log(`  ${((us / 1000 / analysis.ms) * 100).toFixed(1).padStart(5)} %  ${area}`);
  const pct = (us: number) => `${((us / 1000 / analysis.ms) * 100).toFixed(1)} %`;
  return [
    `## ${title}`,
    '',
    `${requests} requests in ${LOAD_S} s (${CONNECTIONS} connections) after a ${WARMUP_S} s warm-up; ${analysis.samples} samples, ${analysis.ms.toFixed(0)} ms of CPU, ${perRequest.toFixed(3)} ms per request. Profile: \`bench/results/${file}\`.`,
    '',
    '| CPU per request by concern (lib/concerns.ts) | µs | share |',
    '| --- | ---: | ---: |',
    ...analysis.byConcern.map(
      ([c, us]) => `| ${c} | ${(us / Math.max(1, requests)).toFixed(0)} | ${pct(us)} |`,
    ),
    '',
    '| Self time by area | share |',
    '| --- | ---: |',
    ...analysis.byArea.slice(0, 15).map(([a, us]) => `| ${a} | ${pct(us)} |`),
    '',
    '| Heaviest functions (self) | share |',
    '| --- | ---: |',
    ...analysis.bySelf.map(([f, us]) => `| \`${f}\` | ${pct(us)} |`),
    '',
    "| The server's own functions (inclusive) | share |",
    '| --- | ---: |',
    ...analysis.byTotal.map(([f, us]) => `| \`${f}\` | ${pct(us)} |`),
    '',
  ];
}

async function main(): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const tmp = mkdtempSync(join(os.tmpdir(), 'pds-profile-'));
  const settings = await loadDatabaseSettings();
  const database = await resolveDatabase({ ...settings, dataDir: join(tmp, 'data'), log });
  const dbName = `pds_profile_${randomBytes(4).toString('hex')}`;
  const client = new MongoClient(database.uri);
  await client.connect();
  const adminKey = randomBytes(32).toString('base64url');
  const serviceOptions = { databaseUri: database.uri, dbName, adminKey, metrics: true };
  const sections: string[] = [];
  try {
    const setup = await startService({ ...serviceOptions, name: 'service' });
    const user = expectStatus<{ apiKey: string }>(
      await call(setup.url, 'POST', '/admin/users', {
        key: adminKey,
        body: { email: 'profile@example.com', subject: 'profile-user' },
      }),
      200,
      'POST /admin/users',
    );
    const seedCtx = { db: client.db(dbName), serviceUrl: setup.url, rootKey: user.apiKey };
    const items = await setupItems(seedCtx, 'profile_items');
    if (!items) throw new Error('POST /data/{c} is not available in this build');
    await seedItems(seedCtx, items, ITEMS);
    await stopChild(setup.child);
    const itemsCtx = { name: items.name, size: ITEMS, id: itemId };
    const pick = (count: number, n: number) => Array.from({ length: count }, (_, i) => i % n);
    const listScenario = scenarios.find((s) => s.id === 'item-list-filter');
    const hot: { id: string; title: string; request: ScenarioRequest; baseline: boolean }[] = [
      {
        id: 'get-by-id',
        title: 'GET item by _id',
        request: itemsById(itemsCtx, pick(SAMPLE_PATHS, ITEMS)),
        baseline: true,
      },
      ...(listScenario && listScenario.phase !== 'other' && listScenario.phase !== 'projects'
        ? [
            {
              id: 'list',
              title: 'List 50 items with a filter',
              request: listScenario.request({
                items: itemsCtx,
                pick,
                target: 'service',
                runTag: 'profile',
                subject: 'profile-user',
                pageLimit: 50,
              }),
              baseline: Boolean(listScenario.baseline),
            },
          ]
        : []),
      // Last: the posts grow the collection the others read.
      {
        id: 'post',
        title: 'POST an item',
        request: itemPost(itemsCtx, `profile-${randomBytes(3).toString('hex')}`),
        baseline: true,
      },
    ];
    // The baseline (bench/baseline.ts) on the same requests, with PROFILE_BASELINE=true: where
    // the least a server can do spends its CPU, next to the service. PROFILE_BASELINE=nest: the
    // framework floor instead (bench/baseline-nest.ts, GET by _id and POST only): where the
    // service's CPU goes beyond the stack it is built on.
    const floor = process.env.PROFILE_BASELINE === 'nest';
    const withBaseline = process.env.PROFILE_BASELINE === 'true' || floor;
    const startTarget = (server: 'service' | 'baseline', name: string): Promise<Target> => {
      const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${RESULTS}`, `--cpu-prof-name=${name}`];
      return server === 'service'
        ? startService({ ...serviceOptions, name: 'service', nodeArgs })
        : startBaseline(
            database.uri,
            dbName,
            { [items.name]: itemTemplate(items) },
            { nodeArgs, name: floor ? 'baseline-nest' : 'baseline' },
          );
    };
    const baselineLabel = floor ? 'framework floor' : 'baseline';
    for (const scenario of hot) {
      const servers =
        withBaseline && scenario.baseline && (!floor || scenario.id !== 'list')
          ? (['service', 'baseline'] as const)
          : (['service'] as const);
      for (const server of servers) {
        const suffix = server === 'baseline' ? `-${floor ? 'floor' : 'baseline'}` : '';
        const title = `${scenario.title}${server === 'baseline' ? ` (${baselineLabel})` : ''}`;
        const name = `profile-${scenario.id}${suffix}.cpuprofile`;
        const target = await startTarget(server, name);
        await load(target.url, user.apiKey, scenario.request, WARMUP_S);
        const from = Number(process.hrtime.bigint() / 1000n);
        const requests = await load(target.url, user.apiKey, scenario.request, LOAD_S);
        const to = Number(process.hrtime.bigint() / 1000n);
        await stopChild(target.child);
        const profile = JSON.parse(readFileSync(join(RESULTS, name), 'utf8')) as CpuProfile;
        sections.push(...report(title, name, requests, analyse(profile, from, to)));
      }
    }
  } finally {
    await stopAll();
    await client
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
    await database.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
  const out = join(RESULTS, 'profile.md');
  writeFileSync(
    out,
    [
      '# CPU profile of the hot paths',
      '',
      `Generated by \`npm run bench:profile\` on ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}, Node.js ${process.version}. Only samples taken during the load are counted; idle time is left out.`,
      '',
      ...sections,
    ].join('\n'),
  );
  log(`\nreport: ${relative(process.cwd(), out)}`);
}

main().catch(async (error: unknown) => {
  process.stderr.write(
    `profile failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  await stopAll();
  process.exit(1);
});
