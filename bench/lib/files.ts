// File uploads and downloads: POST /files (the raw body, with Content-Length) and
// GET /files/{id}/content of many 1 MiB files and of one large file, each next to the baseline's
// bare equivalent (the driver's GridFSBucket: openUploadStream and openDownloadStream) in the
// same tenant database, in a few rounds. The figures are MiB/s, the server's CPU per MiB (from
// /proc, as everywhere in the harness), the embedded database's CPU per MiB, and the server's RSS
// growth while the large file goes through. On FerretDB the database does most of the work: what
// the service adds shows next to the baseline.
import { createHash, randomBytes } from 'node:crypto';
import type { MongoClient } from 'mongodb';
import { ObjectId } from 'mongodb';
import { call, expectStatus, routeMissing } from './api';
import type { LoadSettings } from './load-runner';
import { cpuSecondsOf, memoryOf, startRssSampler, stopChild, waitForQuiet } from './processes';
import { startService, type ServiceOptions, type Target } from './servers';
import type { FilesSettings } from './types';

const MIB = 1024 * 1024;
const RSS_SAMPLE_MS = 50;
const REQUEST_TIMEOUT_MS = 600_000;

export type FilesLegId = 'upload-small' | 'download-small' | 'upload-large' | 'download-large';

export interface FilesLeg {
  id: FilesLegId;
  target: 'service' | 'baseline';
  round: number;
  files: number;
  bytes: number;
  seconds: number;
  mibPerSecond: number;
  cpuMsPerMiB: number;
  /** An embedded database server's CPU over the same time. */
  databaseCpuMsPerMiB?: number;
  rssBeforeKb: number;
  rssPeakKb: number;
  problems: string[];
}

export interface FilesRun {
  settings: FilesSettings;
  /** The tenant database both write to. */
  database: string;
  legs: FilesLeg[];
  /** Why it could not run (a build without the routes). */
  missing?: string;
}

export interface FilesContext {
  /** How the benchmark's service was started: the files instance is started alike. */
  serviceOptions: Omit<ServiceOptions, 'name' | 'metrics'>;
  /** The main database of the files instance: one of its own (see lib/transfer.ts for why). */
  dbName: string;
  client: MongoClient;
  baseline: Target;
  /** A key the baseline knows (its keys are the benchmark's main database's). */
  baselineKey: string;
  load: LoadSettings;
  settings: FilesSettings;
  runTag: string;
  log: (message: string) => void;
}

/** Where one target puts and gets files. */
interface FileTarget {
  server: Target;
  key: string;
  uploadUrl: (name: string) => string;
  contentUrl: (id: string) => string;
  deleteUrl: (id: string) => string;
}

interface Payload {
  bytes: Buffer;
  sha256: string;
}

function payload(size: number): Payload {
  const bytes = randomBytes(size);
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Sends one file as the raw body (fetch sets Content-Length for a Buffer); returns its id. */
async function upload(target: FileTarget, name: string, file: Payload): Promise<string> {
  const res = await fetch(target.uploadUrl(name), {
    method: 'POST',
    headers: { 'x-api-key': target.key, 'content-type': 'application/octet-stream' },
    body: file.bytes,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${text.slice(0, 200)}`);
  const { id, size, sha256 } = JSON.parse(text) as { id: string; size: number; sha256?: string };
  if (size !== file.bytes.length) throw new Error(`stored ${size} bytes, not ${file.bytes.length}`);
  if (sha256 !== undefined && sha256 !== file.sha256) throw new Error('stored another SHA-256');
  return id;
}

/** Reads one file to its end, checking its length and SHA-256; returns the bytes read. */
async function download(target: FileTarget, id: string, file: Payload): Promise<number> {
  const res = await fetch(target.contentUrl(id), {
    headers: { 'x-api-key': target.key },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (res.status !== 200 || !res.body)
    throw new Error(`download answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const hash = createHash('sha256');
  let read = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    read += chunk.length;
    hash.update(chunk);
  }
  if (read !== file.bytes.length) throw new Error(`read ${read} bytes, not ${file.bytes.length}`);
  if (hash.digest('hex') !== file.sha256) throw new Error('read other bytes than were sent');
  return read;
}

async function remove(target: FileTarget, id: string): Promise<void> {
  const res = await fetch(target.deleteUrl(id), {
    method: 'DELETE',
    headers: { 'x-api-key': target.key },
  });
  if (res.status !== 204) throw new Error(`DELETE answered ${res.status}`);
}

/** One leg, once the machine is quiet: time, the server's and the database's CPU, its RSS peak. */
async function measure(
  ctx: FilesContext,
  target: FileTarget,
  leg: Pick<FilesLeg, 'id' | 'round'>,
  work: () => Promise<{ files: number; bytes: number; problems: string[] }>,
): Promise<FilesLeg> {
  const pid = target.server.child.pid;
  await waitForQuiet([...ctx.load.busyPids(), pid], ctx.load.quietMaxMs);
  const databaseCpu = (): number =>
    ctx.load.databasePids.reduce((sum, p) => sum + cpuSecondsOf(p), 0);
  const rssBeforeKb = memoryOf(pid)?.rssKb ?? 0;
  const rss = startRssSampler(pid, RSS_SAMPLE_MS);
  const cpuBefore = cpuSecondsOf(pid);
  const databaseBefore = databaseCpu();
  const started = performance.now();
  const done = await work();
  const seconds = (performance.now() - started) / 1000;
  const mib = done.bytes / MIB;
  const perMiB = (cpuSeconds: number): number =>
    mib > 0 ? Math.round(((cpuSeconds * 1000) / mib) * 100) / 100 : 0;
  const result: FilesLeg = {
    ...leg,
    target: target.server.name === 'baseline' ? 'baseline' : 'service',
    files: done.files,
    bytes: done.bytes,
    seconds: Math.round(seconds * 1000) / 1000,
    mibPerSecond: Math.round((mib / seconds) * 10) / 10,
    cpuMsPerMiB: perMiB(cpuSecondsOf(pid) - cpuBefore),
    ...(ctx.load.databasePids.length
      ? { databaseCpuMsPerMiB: perMiB(databaseCpu() - databaseBefore) }
      : {}),
    rssBeforeKb,
    rssPeakKb: rss.stop(),
    problems: done.problems,
  };
  ctx.log(
    `  round ${leg.round} ${result.target.padEnd(8)} ${leg.id.padEnd(14)} ${String(result.files).padStart(3)} files ${mib.toFixed(0).padStart(4)} MiB in ${result.seconds.toFixed(2)} s = ${result.mibPerSecond.toFixed(1).padStart(6)} MiB/s  CPU ${result.cpuMsPerMiB.toFixed(1)} ms/MiB` +
      (result.databaseCpuMsPerMiB !== undefined
        ? `  database ${result.databaseCpuMsPerMiB.toFixed(1)} ms/MiB`
        : '') +
      `  RSS ${(rssBeforeKb / 1024).toFixed(0)} → peak ${(result.rssPeakKb / 1024).toFixed(0)} MiB` +
      (done.problems.length ? `  ! ${done.problems.join('; ')}` : ''),
  );
  return result;
}

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/** Files one after the other; a failure ends the leg and is its problem. */
async function each(
  count: number,
  one: (i: number) => Promise<number>,
): Promise<{ files: number; bytes: number; problems: string[] }> {
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    try {
      bytes += await one(i);
    } catch (error) {
      return { files: i, bytes, problems: [`file ${i + 1}: ${messageOf(error)}`] };
    }
  }
  return { files: count, bytes, problems: [] };
}

/** Uploads then downloads `count` copies of `file` on `target`; deletes them after (not measured). */
async function legsOf(
  ctx: FilesContext,
  target: FileTarget,
  round: number,
  size: 'small' | 'large',
  count: number,
  file: Payload,
): Promise<FilesLeg[]> {
  const ids: string[] = [];
  const up = await measure(ctx, target, { id: `upload-${size}`, round }, () =>
    each(count, async (i) => {
      ids.push(await upload(target, `bench-${size}-${round}-${i}.bin`, file));
      return file.bytes.length;
    }),
  );
  const down = await measure(ctx, target, { id: `download-${size}`, round }, () =>
    each(ids.length, (i) => download(target, ids[i] ?? '', file)),
  );
  for (const id of ids) await remove(target, id);
  return [up, down];
}

/** The tenant database the service wrote a file to (its record in the main database says). */
async function tenantDatabaseOf(ctx: FilesContext, id: string): Promise<string | undefined> {
  const record = await ctx.client
    .db(ctx.dbName)
    .collection<{ _id: ObjectId; database?: string }>('file_records')
    .findOne({ _id: new ObjectId(id) });
  return record?.database;
}

/** An instance on the files' database, with a quota the rounds cannot reach. */
function startFilesInstance(ctx: FilesContext): Promise<Target> {
  return startService({
    ...ctx.serviceOptions,
    dbName: ctx.dbName,
    name: 'service-files',
    metrics: true,
    env: { SYNC_INDEXES: 'true', FILE_QUOTA_BYTES: String(2 ** 40) },
  });
}

function serviceTarget(instance: Target, key: string): FileTarget {
  return {
    server: instance,
    key,
    uploadUrl: (name) => `${instance.url}/files?name=${encodeURIComponent(name)}`,
    contentUrl: (id) => `${instance.url}/files/${id}/content`,
    deleteUrl: (id) => `${instance.url}/files/${id}`,
  };
}

/**
 * Starts an instance of its own (on its own database), makes a tenant, finds its database with a
 * first upload, then runs the rounds: in each, the small files and then the large one, on the
 * service and then on the baseline. The large file goes through an instance started for it, so
 * that its RSS growth is the upload's and not what the small files left for the collector.
 */
export async function runFiles(ctx: FilesContext): Promise<FilesRun> {
  const { settings } = ctx;
  const instance = await startFilesInstance(ctx);
  try {
    const created = await call(instance.url, 'POST', '/admin/users', {
      key: ctx.serviceOptions.adminKey,
      body: {
        email: `bench-files-${ctx.runTag}@example.com`,
        subject: `bench-files-${ctx.runTag}`,
      },
    });
    const key = expectStatus<{ apiKey: string }>(created, 200, 'POST /admin/users').apiKey;
    const service = serviceTarget(instance, key);
    const probe = await call(instance.url, 'POST', '/files?name=probe.txt', {
      key,
      rawBody: 'probe',
      headers: { 'content-type': 'text/plain' },
    });
    if (routeMissing(probe))
      return { settings, database: '', legs: [], missing: 'POST /files answers 404' };
    const probeId = expectStatus<{ id: string }>(probe, 201, 'POST /files').id;
    const database = await tenantDatabaseOf(ctx, probeId);
    await remove(service, probeId);
    if (!database) throw new Error('the first file has no record naming its database');
    const base = ctx.baseline.url;
    const baseline: FileTarget = {
      server: ctx.baseline,
      key: ctx.baselineKey,
      uploadUrl: (name) => `${base}/gridfs/${database}?name=${encodeURIComponent(name)}`,
      contentUrl: (id) => `${base}/gridfs/${database}/${id}`,
      deleteUrl: (id) => `${base}/gridfs/${database}/${id}`,
    };
    const small = payload(MIB);
    const large = payload(settings.largeMiB * MIB);
    const legs: FilesLeg[] = [];
    const busyBefore = ctx.load.busyPids;
    ctx.load.busyPids = () => [...busyBefore(), instance.child.pid];
    try {
      for (let round = 1; round <= settings.rounds; round++) {
        for (const target of [service, baseline])
          legs.push(...(await legsOf(ctx, target, round, 'small', settings.smallFiles, small)));
        const fresh = await startFilesInstance(ctx);
        try {
          for (const target of [serviceTarget(fresh, key), baseline])
            legs.push(...(await legsOf(ctx, target, round, 'large', 1, large)));
        } finally {
          await stopChild(fresh.child);
        }
      }
    } finally {
      ctx.load.busyPids = busyBefore;
    }
    return { settings, database, legs };
  } finally {
    await stopChild(instance.child);
  }
}
