// Tenant moves against tenant size and write rate: a second database server is started as
// cluster b, and one instance with clusters a (the bench's main server) and b. For each size and
// number of writers, a new tenant on a gets that many items in two collections, the writers
// create items as fast as they are answered (a refused write, 503, is tried again after 100 ms), and the
// tenant is moved to b: how long the move took, how it ended, how many passes its copies needed,
// and the writes per second it went through. Every move must end `done`, within the bound of
// docs/deployment.md ("How long a move takes").
import { join } from 'node:path';
import { resolveDatabase, type DatabaseSettings } from '../../tools/dev-database';
import { call, expectStatus } from './api';
import { stopChild } from './processes';
import { startService, type ServiceOptions, type Target } from './servers';
import type { Check } from './types';

/** Short grace periods: a move waits two of them, which are not what this measures. */
const MOVE_ENV = {
  REGISTRY_CACHE_MS: '300',
  COLLECTION_DROP_GRACE_MS: '1500',
  LIFECYCLE_POLL_MS: '200',
  MOVE_LEASE_MS: '6000',
  MOVE_MAX_WRITE_PAUSE_MS: '5000',
  MOVE_BASE_TIME_MS: '60000',
  MOVE_TIME_PER_1000_ITEMS_MS: '10000',
};
const COLLECTIONS = ['orders', 'logs'] as const;

export interface TenantMoveRow {
  items: number;
  writers: number;
  /** Writes acknowledged per second while the move ran. */
  writesPerSecond: number;
  seconds: number;
  status: string;
  /** The highest pass the move showed (a pause's last copy counts as one). */
  passes: number;
  /** The deadline's budget for this tenant (s), and the bound it must end within. */
  boundSeconds: number;
  error: string | null;
  /** Each change of phase, collection or pass the polls saw: when (s from the start) and what. */
  timeline: string[];
}

export interface TenantMoveRun {
  rows: TenantMoveRow[];
  problems: string[];
}

interface MoveBody {
  status: string;
  phase: string;
  collectionsCopied: number;
  pass: number;
  itemsLeft: number;
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
}

/**
 * The bound of docs/deployment.md for a tenant of `items`, with MOVE_ENV: its deadline, a lease
 * and a poll (a takeover, or the step under way at the deadline), the grace before the sources
 * go and their removal.
 */
function boundMs(items: number): number {
  const n = (name: keyof typeof MOVE_ENV) => Number(MOVE_ENV[name]);
  return (
    2 * n('COLLECTION_DROP_GRACE_MS') +
    n('MOVE_BASE_TIME_MS') +
    Math.ceil(items / 1000) * n('MOVE_TIME_PER_1000_ITEMS_MS') +
    n('MOVE_LEASE_MS') +
    n('LIFECYCLE_POLL_MS') +
    5_000
  );
}

async function moveOne(
  service: Target,
  adminKey: string,
  items: number,
  writers: number,
  tag: string,
): Promise<TenantMoveRow> {
  const user = expectStatus<{ apiKey: string; profile: { subject: string } }>(
    await call(service.url, 'POST', '/admin/users', {
      key: adminKey,
      body: { email: `${tag}@example.com`, region: 'a' },
    }),
    200,
    'POST /admin/users',
  );
  const key = user.apiKey;
  for (const [c, collection] of COLLECTIONS.entries()) {
    const count = Math.floor(items / COLLECTIONS.length) + (c === 0 ? items % 2 : 0);
    for (let start = 0; start < count; start += 500) {
      const batch = Array.from({ length: Math.min(500, count - start) }, (_, i) => ({
        n: start + i,
        text: 'moved',
      }));
      expectStatus(
        await call(service.url, 'POST', `/data/${collection}/bulk`, {
          key,
          body: { items: batch },
        }),
        200,
        `POST /data/${collection}/bulk`,
      );
    }
  }
  let writing = true;
  let acked = 0;
  const loops = Array.from({ length: writers }, async (_, w) => {
    for (let n = 0; writing; n += 1) {
      const res = await call(service.url, 'POST', `/data/${COLLECTIONS[w % 2]}`, {
        key,
        body: { item: { w, n } },
      }).catch(() => undefined);
      if (res?.status === 200) acked += 1;
      // A refused write (503, a pause) waits 100 ms: a client far keener than its Retry-After (1 s).
      else if (res?.status === 503) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  const started = expectStatus<{ id: string }>(
    await call(service.url, 'POST', `/admin/tenants/user/${user.profile.subject}/move`, {
      key: adminKey,
      body: { cluster: 'b' },
    }),
    202,
    'POST /admin/tenants/user/{id}/move',
  );
  const ackedBefore = acked;
  const since = performance.now();
  const bound = boundMs(items);
  let move: MoveBody | undefined;
  let passes = 0;
  const timeline: string[] = [];
  let step = '';
  try {
    for (;;) {
      move = expectStatus<MoveBody>(
        await call(service.url, 'GET', `/admin/moves/${started.id}`, { key: adminKey }),
        200,
        'GET /admin/moves/{id}',
      );
      passes = Math.max(passes, move.pass);
      const now = `${move.status} ${move.phase}, ${move.collectionsCopied} collections, pass ${move.pass}`;
      if (now !== step) {
        step = now;
        const at = (performance.now() - since) / 1000;
        timeline.push(`${at.toFixed(1)} s: ${now} (${move.itemsLeft} left)`);
      }
      if (move.status !== 'running') break;
      if (performance.now() - since > bound) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    writing = false;
    await Promise.all(loops);
  }
  const seconds =
    move?.finishedAt !== null && move !== undefined
      ? (Date.parse(move.finishedAt) - Date.parse(move.startedAt)) / 1000
      : (performance.now() - since) / 1000;
  return {
    items,
    writers,
    writesPerSecond: (acked - ackedBefore) / ((performance.now() - since) / 1000),
    seconds,
    status: move?.status ?? 'unknown',
    passes,
    boundSeconds: bound / 1000,
    error: move?.error ?? null,
    timeline,
  };
}

/** Starts cluster b and the instance, moves a tenant per size and write rate, stops them. */
export async function benchTenantMoves(options: {
  sizes: readonly number[];
  writers: readonly number[];
  database: DatabaseSettings;
  tmp: string;
  mainUri: string;
  service: Omit<ServiceOptions, 'name' | 'metrics'>;
  log: (message: string) => void;
}): Promise<TenantMoveRun> {
  const { log } = options;
  log('\ntenant moves: move time against tenant size and write rate');
  const run: TenantMoveRun = { rows: [], problems: [] };
  const clusterB = await resolveDatabase({
    ...options.database,
    dataDir: join(options.tmp, 'move-b'),
    log: () => undefined,
  });
  let service: Target | undefined;
  try {
    service = await startService({
      ...options.service,
      name: 'service-move',
      metrics: false,
      env: {
        ...MOVE_ENV,
        // Its database is new: no instance built its indexes (the registry's unique index among
        // them, without which concurrent first writes register a collection more than once).
        SYNC_INDEXES: 'true',
        DATA_CLUSTERS: JSON.stringify({
          a: { uri: options.mainUri, region: 'a' },
          b: { uri: clusterB.uri, region: 'b' },
        }),
      },
    });
    for (const items of options.sizes) {
      for (const writers of options.writers) {
        const tag = `move-${items}-${writers}-${Date.now()}`;
        const row = await moveOne(service, options.service.adminKey, items, writers, tag);
        run.rows.push(row);
        log(
          `  ${items} items, ${writers} writers (${row.writesPerSecond.toFixed(0)} writes/s): ` +
            `${row.status} in ${row.seconds.toFixed(1)} s, ${row.passes} passes` +
            (row.error ? ` (${row.error})` : ''),
        );
        for (const line of row.timeline) log(`    ${line}`);
      }
    }
  } catch (error) {
    run.problems.push(error instanceof Error ? error.message : String(error));
  } finally {
    if (service) await stopChild(service.child);
    await clusterB.stop();
  }
  return run;
}

/** Every move ended done, within its bound. */
export function tenantMoveChecks(run: TenantMoveRun | undefined): Check[] {
  if (!run) return [];
  const late = run.rows.filter((r) => r.status !== 'done' || r.seconds > r.boundSeconds);
  return [
    {
      name: 'Tenant moves end done within their bound (docs/deployment.md)',
      status: run.problems.length > 0 || late.length > 0 ? 'FAIL' : 'PASS',
      detail:
        run.problems.join('; ') ||
        (late.length > 0
          ? late.map((r) => `${r.items} items, ${r.writers} writers: ${r.status}`).join('; ')
          : `${run.rows.length} moves`),
    },
  ];
}

export function tenantMoveMarkdown(run: TenantMoveRun | undefined): string {
  if (!run) return '';
  const lines = [
    '\n## Tenant moves: time against tenant size and write rate\n',
    'One instance, clusters a and b on two database servers, grace periods of 1.5 s (a move waits',
    'two of them). Writers create items as fast as they are answered for the whole move (a 503',
    'waits 100 ms).\n',
    '| items | writers | writes/s during the move | move time (s) | bound (s) | passes | status |',
    '|---:|---:|---:|---:|---:|---:|---|',
    ...run.rows.map(
      (r) =>
        `| ${r.items} | ${r.writers} | ${r.writesPerSecond.toFixed(0)} | ${r.seconds.toFixed(1)} | ${r.boundSeconds.toFixed(0)} | ${r.passes} | ${r.status}${r.error ? `: ${r.error}` : ''} |`,
    ),
    ...(run.problems.length > 0 ? ['', `Problems: ${run.problems.join('; ')}`] : []),
  ];
  return `${lines.join('\n')}\n`;
}
