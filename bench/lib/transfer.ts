// Export and import of a namespace: GET /export of a namespace seeded with `size` items in one
// collection, and POST /import of the same item lines into a fresh tenant, each next to the
// baseline's bare equivalent on the same database (a sorted cursor out, insertMany in), with the
// service's memory sampled throughout. Throughput on FerretDB is mostly the database's; what the
// service adds shows next to the baseline, and its memory must stay flat however many items pass.
import type { MongoClient, ObjectId } from 'mongodb';
import { call, expectStatus, routeMissing } from './api';
import type { LoadSettings } from './load-runner';
import { startMemoryTrace, type MemorySample } from './memory-trace';
import { cpuSecondsOf, memoryOf, startRssSampler, stopChild, waitForQuiet } from './processes';
import {
  itemBody,
  itemCreatedAt,
  itemId,
  itemTemplate,
  seedItems,
  setupItems,
  type ItemTemplate,
  type Items,
  type SeedContext,
} from './seed';
import { startService, type ServiceOptions, type Target } from './servers';
import {
  linesBody,
  readExport,
  sendImport,
  type ExportRead,
  type ImportRead,
} from './transfer-client';

export const TRANSFER_COLLECTION = 'bench_transfer';
/** The baseline's import writes here: a collection of its own next to the exported one. */
const BASELINE_IMPORT_COLLECTION = 'bench_transfer_baseline';
/** The target: an export or an import grows the service's RSS by less than this. */
export const RSS_GROWTH_LIMIT_MIB = 20;
const RSS_SAMPLE_MS = 50;

export interface TransferLeg {
  id: 'export' | 'export-gzip' | 'import';
  target: 'service' | 'baseline';
  route: string;
  /** Items that went through: item lines read (export), items created (import). */
  items: number;
  seconds: number;
  itemsPerSecond: number;
  /** Bytes on the wire: the export as received, the import body as sent. */
  bytes: number;
  rssBeforeKb: number;
  rssPeakKb: number;
  rssAfterKb: number;
  /** The server's memory once a second (MiB): RSS, and the service's heap figures. */
  trace: MemorySample[];
  cpuMsPerItem: number;
  /** An embedded database server's CPU over the same time. */
  databaseCpuMsPerItem?: number;
  problems: string[];
}

export interface TransferRun {
  size: number;
  seedSeconds: number;
  legs: TransferLeg[];
  /** Why it could not run (a build without the routes). */
  missing?: string;
}

/**
 * What the transfers run on, made before the baseline starts (it must know the collections): a
 * database of their own on the same server, so that neither the imported items nor their change
 * feed weigh on anything else (on a scanning database a longer feed costs every poll), and so
 * that an instance can start there after the cluster comparison has placed tenants on clusters
 * it no longer runs.
 */
export interface TransferSetup {
  dbName: string;
  /** The exporting tenant's key. */
  key: string;
  /** A tenant that has written nothing: the import's. */
  importKey: string;
  items: Items;
  seedCtx: SeedContext;
  baselineCollections: Record<string, ItemTemplate>;
}

type InstanceOptions = Omit<ServiceOptions, 'name' | 'metrics'>;

/** An instance on the transfers' database, which it gives its indexes if they are not there. */
function startTransferInstance(options: InstanceOptions, dbName: string): Promise<Target> {
  return startService({
    ...options,
    dbName,
    name: 'service-transfer',
    metrics: true,
    env: { SYNC_INDEXES: 'true' },
  });
}

async function newTenant(serviceUrl: string, adminKey: string, name: string): Promise<string> {
  const created = await call(serviceUrl, 'POST', '/admin/users', {
    key: adminKey,
    body: { email: `${name}@example.com`, subject: name },
  });
  return expectStatus<{ apiKey: string }>(created, 200, 'POST /admin/users').apiKey;
}

/**
 * The two tenants, and the exporting one's collection `bench_transfer` made through the API; the
 * sample item that taught the stored shape is removed, so the collection holds exactly the
 * seeded items. `missing` says why not when the build has no data or export routes.
 */
export async function setupTransfer(
  client: MongoClient,
  options: InstanceOptions,
  runTag: string,
): Promise<TransferSetup | { missing: string }> {
  const dbName = `${options.dbName}_transfer`;
  const instance = await startTransferInstance(options, dbName);
  try {
    const key = await newTenant(instance.url, options.adminKey, `bench-transfer-${runTag}`);
    const importKey = await newTenant(instance.url, options.adminKey, `bench-import-${runTag}`);
    const seedCtx = { db: client.db(dbName), serviceUrl: instance.url, rootKey: key };
    const items = await setupItems(seedCtx, TRANSFER_COLLECTION);
    if (!items) return { missing: 'no data routes (POST /data/{c} answers 404)' };
    const probe = await call(instance.url, 'GET', '/export?collections=none', { key });
    if (routeMissing(probe)) return { missing: 'GET /export answers 404' };
    const sampleId = items.sample._id;
    if (sampleId !== undefined)
      await items.db
        .collection<{ _id: string | ObjectId }>(items.physical)
        .deleteOne({ _id: sampleId });
    const template = itemTemplate(items);
    return {
      dbName,
      key,
      importKey,
      items,
      seedCtx,
      baselineCollections: {
        [TRANSFER_COLLECTION]: template,
        [BASELINE_IMPORT_COLLECTION]: { ...template, physical: `${items.physical}_baseline` },
      },
    };
  } finally {
    await stopChild(instance.child);
  }
}

/** Item i as an export writes it, and as the import reads it. */
function itemLine(i: number): string {
  const at = itemCreatedAt(i).toISOString();
  const item = { _id: itemId(i), ...itemBody(i), _createdAt: at, _updatedAt: at };
  return JSON.stringify({ type: 'item', collection: TRANSFER_COLLECTION, item });
}

export interface TransferContext {
  /** How the benchmark's service was started: the transfers' instances are started alike. */
  serviceOptions: InstanceOptions;
  baseline: Target;
  /** A key the baseline knows (its keys are the main database's). */
  baselineKey: string;
  load: LoadSettings;
  setup: TransferSetup;
  size: number;
  log: (message: string) => void;
}

/** One leg, once the machine is quiet: time, CPU, and the server's RSS every RSS_SAMPLE_MS. */
async function measure(
  ctx: TransferContext,
  target: Target,
  leg: Pick<TransferLeg, 'id' | 'route'>,
  work: () => Promise<{ items: number; bytes: number; problems: string[] }>,
): Promise<TransferLeg> {
  const pid = target.child.pid;
  await waitForQuiet([...ctx.load.busyPids(), pid], ctx.load.quietMaxMs);
  const metricsUrl = target.name === 'baseline' ? undefined : target.metricsUrl;
  const databaseCpu = (): number =>
    ctx.load.databasePids.reduce((sum, p) => sum + cpuSecondsOf(p), 0);
  const rssBeforeKb = memoryOf(pid)?.rssKb ?? 0;
  const trace = startMemoryTrace(pid, metricsUrl);
  const rss = startRssSampler(pid, RSS_SAMPLE_MS);
  const cpuBefore = cpuSecondsOf(pid);
  const databaseBefore = databaseCpu();
  const started = performance.now();
  const done = await work();
  const seconds = (performance.now() - started) / 1000;
  const perItem = (cpuSeconds: number): number =>
    Math.round(((cpuSeconds * 1000) / Math.max(1, done.items)) * 1000) / 1000;
  const result: TransferLeg = {
    ...leg,
    target: target.name === 'baseline' ? 'baseline' : 'service',
    items: done.items,
    seconds: Math.round(seconds * 100) / 100,
    itemsPerSecond: Math.round(done.items / seconds),
    bytes: done.bytes,
    rssBeforeKb,
    rssPeakKb: rss.stop(),
    rssAfterKb: memoryOf(pid)?.rssKb ?? 0,
    trace: await trace.stop(),
    cpuMsPerItem: perItem(cpuSecondsOf(pid) - cpuBefore),
    ...(ctx.load.databasePids.length
      ? { databaseCpuMsPerItem: perItem(databaseCpu() - databaseBefore) }
      : {}),
    problems: done.problems,
  };
  const growth = (result.rssPeakKb - rssBeforeKb) / 1024;
  ctx.log(
    `  ${result.target.padEnd(8)} ${leg.id.padEnd(11)} ${String(result.items).padStart(7)} items in ${result.seconds} s = ${String(result.itemsPerSecond).padStart(6)} items/s  RSS ${(rssBeforeKb / 1024).toFixed(0)} → peak ${(result.rssPeakKb / 1024).toFixed(0)} MiB (+${growth.toFixed(1)})` +
      (done.problems.length ? `  ! ${done.problems.join('; ')}` : ''),
  );
  return result;
}

function exportProblems(read: ExportRead, size: number): string[] {
  if (read.problem && read.status !== 200) return [read.problem];
  const problems = read.problem ? [read.problem] : [];
  if (read.itemLines !== size) problems.push(`${read.itemLines} item lines, not ${size}`);
  if (read.otherLines > 0) problems.push(`${read.otherLines} lines that are not items`);
  if (read.end && read.end.items !== size) problems.push(`the end record counts ${read.end.items}`);
  if (read.end && !read.digestMatches) problems.push("the end record's SHA-256 does not match");
  return problems;
}

function importProblems(read: ImportRead, size: number): string[] {
  if (read.problem && read.status !== 200) return [read.problem];
  const results = Object.values(read.statuses).reduce((sum, n) => sum + n, 0);
  const problems = read.problem
    ? [`${read.problem} after ${results.toLocaleString('en-US')} result lines`]
    : [];
  const { totals } = read;
  if (totals && (totals.outcome !== 'complete' || totals.created !== size || totals.failed))
    problems.push(`totals ${JSON.stringify(totals)}`);
  const others = Object.entries(read.statuses).filter(([status]) => status !== '201');
  if (others.length) problems.push(`result statuses ${JSON.stringify(read.statuses)}`);
  return problems;
}

/** Seeds the exporting tenant's collection, then exports and imports on the service and the baseline. */
export async function runTransfer(ctx: TransferContext): Promise<TransferRun> {
  const { baseline, baselineKey, setup, size } = ctx;
  const seedStarted = Date.now();
  await seedItems(setup.seedCtx, setup.items, size);
  const seedSeconds = Math.round((Date.now() - seedStarted) / 100) / 10;
  ctx.log(`  ${size.toLocaleString('en-US')} items seeded in ${seedSeconds} s`);

  const exportLeg = (target: Target, path: string, key: string, gzip = false) =>
    measure(
      ctx,
      target,
      { id: gzip ? 'export-gzip' : 'export', route: `GET ${path}` },
      async () => {
        const read = await readExport(`${target.url}${path}`, key, { gzip });
        if (gzip && read.status === 200 && !read.gzip) read.problem ??= 'the answer is not gzip';
        return { items: read.itemLines, bytes: read.bytes, problems: exportProblems(read, size) };
      },
    );
  const importLeg = (target: Target, path: string, key: string) =>
    measure(ctx, target, { id: 'import', route: `POST ${path}` }, async () => {
      const read = await sendImport(`${target.url}${path}`, key, linesBody(size, itemLine));
      return {
        // Cut short, the results read so far say how far it came.
        items: read.totals?.created ?? read.statuses['201'] ?? 0,
        bytes: read.bytesSent,
        problems: importProblems(read, size),
      };
    });
  // Each of the service's transfers runs on an instance started for it: what one transfer leaves
  // for the collector (an export's garbage waits in the old space for a full collection) would
  // otherwise be the next one's "before".
  const fresh = async (leg: (instance: Target) => Promise<TransferLeg>): Promise<TransferLeg> => {
    const instance = await startTransferInstance(ctx.serviceOptions, setup.dbName);
    try {
      return await leg(instance);
    } finally {
      await stopChild(instance.child);
    }
  };
  const baselineExport = `/transfer/export/${TRANSFER_COLLECTION}`;
  const baselineImport = `/transfer/import/${BASELINE_IMPORT_COLLECTION}`;
  const legs: TransferLeg[] = [];
  legs.push(await fresh((instance) => exportLeg(instance, '/export', setup.key)));
  legs.push(await exportLeg(baseline, baselineExport, baselineKey));
  legs.push(await fresh((instance) => exportLeg(instance, '/export', setup.key, true)));
  legs.push(await fresh((instance) => importLeg(instance, '/import?mode=insert', setup.importKey)));
  legs.push(await importLeg(baseline, baselineImport, baselineKey));
  return { size, seedSeconds, legs };
}
