import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import {
  access,
  chmod,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { Socket, connect } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { childPort } from './ports';

const execFileAsync = promisify(execFile);

const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
/** A build that has held the lock this long is assumed dead (a cold build takes about a minute). */
const STALE_LOCK_MS = 15 * 60_000;
const LOCK_WAIT_TIMEOUT_MS = 20 * 60_000;
const STDERR_TAIL_BYTES = 4096;

export interface FerretDbOptions {
  dataDir: string;
  cacheDir: string;
  version: string;
  bin?: string;
  host: string;
  /** 0: a port the kernel picks, read back once the server listens (childPort). */
  port: number;
  log: (message: string) => void;
  /** More command-line flags (tests start servers that behave otherwise, e.g. a smaller insert batch). */
  args?: readonly string[];
}

export interface StartedServer {
  uri: string;
  version: string;
  dataDir: string;
  /** The server process (tests freeze it with SIGSTOP to simulate a hung database). */
  pid?: number;
  stop(): Promise<void>;
}

/** Thrown when FerretDB cannot be built because the Go toolchain is missing. */
export class GoNotFoundError extends Error {
  constructor() {
    super('go not found on PATH, cannot build FerretDB');
    this.name = 'GoNotFoundError';
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, fsConstants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const { code } = error;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

function tail(text: string, lines = 8): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

/** execFile with the failing command's stderr tail in the error, which is what a user needs to see. */
async function run(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<string> {
  try {
    const { stdout } = await execFileAsync(file, args, {
      ...options,
      maxBuffer: 64 * 1024 * 1024,
      encoding: 'utf8',
    });
    return stdout;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw error;
    const stderr =
      typeof error === 'object' &&
      error !== null &&
      'stderr' in error &&
      typeof error.stderr === 'string'
        ? error.stderr
        : '';
    const stdout =
      typeof error === 'object' &&
      error !== null &&
      'stdout' in error &&
      typeof error.stdout === 'string'
        ? error.stdout
        : '';
    const detail =
      tail(stderr) || tail(stdout) || (error instanceof Error ? error.message : String(error));
    throw new Error(`\`${file} ${args.join(' ')}\` failed: ${detail}`);
  }
}

async function assertGoAvailable(): Promise<void> {
  try {
    await execFileAsync('go', ['version']);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') throw new GoNotFoundError();
    throw error;
  }
}

/** The module cache is read-only; the build has to write version.txt, and cleanup has to delete. */
async function makeWritable(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await makeWritable(path);
    else if (entry.isFile()) await chmod(path, ((await stat(path)).mode & 0o777) | 0o200);
  }
}

interface ModuleDownload {
  Dir?: string;
  Error?: string;
}

async function buildFerretDb(version: string, versionDir: string, target: string): Promise<void> {
  const buildDir = await mkdtemp(join(versionDir, '.build-'));
  try {
    // go mod download exits non-zero with the reason in the JSON's Error field.
    let output: string;
    try {
      output = await run('go', ['mod', 'download', '-json', `${FERRETDB_MODULE}@${version}`], {
        cwd: buildDir,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`could not download ${FERRETDB_MODULE}@${version}: ${message}`);
    }
    const download = JSON.parse(output) as ModuleDownload;
    if (download.Error)
      throw new Error(`could not download ${FERRETDB_MODULE}@${version}: ${download.Error}`);
    if (!download.Dir)
      throw new Error(`go mod download printed no Dir for ${FERRETDB_MODULE}@${version}`);

    const source = join(buildDir, 'src');
    await cp(download.Dir, source, { recursive: true });
    await makeWritable(source);
    // version.txt is generated by FerretDB's release tooling and missing from the module zip;
    // without it the binary panics at start.
    await mkdir(join(source, 'build', 'version'), { recursive: true });
    await writeFile(join(source, 'build', 'version', 'version.txt'), `${version}\n`);

    const gobin = join(buildDir, 'bin');
    await run('go', ['install', '-buildvcs=false', './cmd/ferretdb'], {
      cwd: source,
      env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
    await mkdir(join(versionDir, 'bin'), { recursive: true });
    // Same filesystem, so the binary appears at its final path complete or not at all.
    await rename(join(gobin, 'ferretdb'), target);
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
}

/** Builds killed half-way leave their temporary directory behind; only the lock holder may clear them. */
async function removeBuildLeftovers(versionDir: string): Promise<void> {
  for (const entry of await readdir(versionDir)) {
    if (!entry.startsWith('.build-')) continue;
    const path = join(versionDir, entry);
    try {
      await makeWritable(path);
      await rm(path, { recursive: true, force: true });
    } catch {
      // Leftovers waste space but do not affect the build.
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

async function lockIsStale(lockDir: string): Promise<boolean> {
  try {
    const owner = (await readFile(join(lockDir, 'owner'), 'utf8')).trim();
    const [pid, host] = owner.split('@');
    if (host === hostname() && pid && !processAlive(Number(pid))) return true;
  } catch {
    // The owner file is written just after mkdir; until then only the age below can tell.
  }
  try {
    return Date.now() - (await stat(lockDir)).mtimeMs > STALE_LOCK_MS;
  } catch {
    return false;
  }
}

/**
 * Returns the FerretDB binary for `version`, building it with `go install` on the first call on
 * this machine. Several processes may get here at once (jest workers); a lock directory makes
 * all but one wait for the build instead of repeating it.
 */
export async function ensureFerretDbBinary(
  options: Pick<FerretDbOptions, 'cacheDir' | 'version' | 'bin' | 'log'>,
): Promise<string> {
  const { cacheDir, version, log } = options;
  if (options.bin) {
    if (!(await isExecutable(options.bin))) {
      throw new Error(`FERRETDB_BIN=${options.bin} is not an executable file`);
    }
    return options.bin;
  }

  const versionDir = join(cacheDir, `ferretdb-${version}`);
  const target = join(versionDir, 'bin', 'ferretdb');
  if (await isExecutable(target)) {
    log(`database: using the FerretDB ${version} binary built earlier (${target})`);
    return target;
  }

  await assertGoAvailable();
  await mkdir(versionDir, { recursive: true });
  const lockDir = join(versionDir, '.build.lock');
  const deadline = Date.now() + LOCK_WAIT_TIMEOUT_MS;
  let announcedWait = false;
  for (;;) {
    try {
      await mkdir(lockDir);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
      if (await isExecutable(target)) {
        log(`database: using the FerretDB ${version} binary another process just built`);
        return target;
      }
      if (await lockIsStale(lockDir)) {
        await rm(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `timed out waiting for another process to build FerretDB (lock ${lockDir})`,
        );
      }
      if (!announcedWait) {
        log(`database: another process is building FerretDB ${version}, waiting for it`);
        announcedWait = true;
      }
      await sleep(500);
      continue;
    }

    try {
      await writeFile(join(lockDir, 'owner'), `${process.pid}@${hostname()}\n`);
      // The previous lock holder may have finished between our check and our mkdir.
      if (await isExecutable(target)) return target;
      await removeBuildLeftovers(versionDir);
      log(`database: building FerretDB ${version} with go install (first run only, ~1 min)`);
      const started = Date.now();
      await buildFerretDb(version, versionDir, target);
      log(
        `database: built FerretDB ${version} in ${((Date.now() - started) / 1000).toFixed(1)} s (${target})`,
      );
      return target;
    } finally {
      await rm(lockDir, { recursive: true, force: true });
    }
  }
}

async function binaryVersion(bin: string): Promise<string> {
  try {
    const output = await run(bin, ['--version'], {});
    return /version:\s*(\S+)/.exec(output)?.[1] ?? 'unknown version';
  } catch {
    return 'unknown version';
  }
}

/**
 * Kills the server if this process dies without stopping it. The 'exit' hook covers normal exits;
 * a watchdog process covers the parent being killed by a signal (e.g. jest ending its workers),
 * where no JavaScript runs any more.
 */
const WATCHDOG_SOURCE = `
const [parent, child] = process.argv.slice(1).map(Number);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; } };
const timer = setInterval(() => {
  if (!alive(child)) process.exit(0);
  if (process.ppid === parent && alive(parent)) return;
  clearInterval(timer);
  try { process.kill(child, 'SIGTERM'); } catch {}
  setTimeout(() => { try { process.kill(child, 'SIGKILL'); } catch {} process.exit(0); }, ${STOP_TIMEOUT_MS});
}, 1000);
`;

function startWatchdog(childPid: number): ChildProcess | undefined {
  try {
    const watchdog = spawn(
      process.execPath,
      ['-e', WATCHDOG_SOURCE, String(process.pid), String(childPid)],
      {
        stdio: 'ignore',
        detached: true,
      },
    );
    watchdog.on('error', () => undefined);
    watchdog.unref();
    return watchdog;
  } catch {
    return undefined;
  }
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, timeoutMs);
    const onExit = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

function tcpAccepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function pingOnce(uri: string): Promise<boolean> {
  const client = new MongoClient(uri, {
    directConnection: true,
    serverSelectionTimeoutMS: 2_000,
    connectTimeoutMS: 2_000,
  });
  try {
    await client.db('admin').command({ ping: 1 });
    return true;
  } catch {
    return false;
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Builds FerretDB if needed and starts it with its embedded SQLite handler. */
export async function startFerretDb(options: FerretDbOptions): Promise<StartedServer> {
  const { host, log } = options;
  const bin = await ensureFerretDbBinary(options);
  const version = options.bin ? await binaryVersion(bin) : options.version;
  const dataDir = join(options.dataDir, 'ferretdb');
  await mkdir(dataDir, { recursive: true });

  const args = [
    '--handler=sqlite',
    // FerretDB treats the URL as a directory only with the trailing slash.
    `--sqlite-url=file:${dataDir}/`,
    `--listen-addr=${host}:${options.port}`,
    `--state-dir=${dataDir}`,
    // The default debug listener (127.0.0.1:8088) would clash between instances.
    '--debug-addr=-',
    '--telemetry=disable',
    '--log-level=warn',
    ...(options.args ?? []),
  ];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let spawnError: Error | undefined;
  child.on('error', (error) => {
    spawnError = error;
  });

  const watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid);
  const killOnExit = (): void => {
    child.kill('SIGKILL');
    // The watchdog goes too: once the server is gone, its pid may be reused by another process.
    watchdog?.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  // The server lives as long as this process wants it; it must not by itself keep Node running.
  child.unref();
  if (child.stdout instanceof Socket) child.stdout.unref();
  if (child.stderr instanceof Socket) child.stderr.unref();

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Without a pid the spawn itself failed: there is nothing to signal or wait for.
      if (child.pid !== undefined && !(await waitForExit(child, 0))) {
        child.kill('SIGTERM');
        if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
          child.kill('SIGKILL');
          await waitForExit(child, STOP_TIMEOUT_MS);
        }
      }
      process.off('exit', killOnExit);
      watchdog?.kill('SIGKILL');
    })();
    return stopping;
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  // A port found free beforehand could be taken by another server while this one starts, and
  // the ping below would then reach that one: given 0, it listens where the kernel says.
  const port = (await childPort(child, options.port, READY_TIMEOUT_MS)) ?? options.port;
  const uri = `mongodb://${host}:${port}/`;
  for (;;) {
    const exited = child.exitCode !== null || child.signalCode !== null;
    if (spawnError || exited) {
      await stop();
      const reason = spawnError
        ? spawnError.message
        : `exited with ${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}`;
      throw new Error(`FerretDB ${reason}${output.trim() ? `: ${tail(output)}` : ''}`);
    }
    // Exit is checked after the ping too: another server already on this port would answer it.
    if (
      (await tcpAccepts(host, port)) &&
      (await pingOnce(uri)) &&
      child.exitCode === null &&
      child.signalCode === null
    ) {
      break;
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `FerretDB did not accept connections on ${host}:${port} within ${READY_TIMEOUT_MS / 1000} s` +
          (output.trim() ? `: ${tail(output)}` : ''),
      );
    }
    await sleep(50);
  }

  child.once('exit', (code, signal) => {
    if (stopping) return;
    log(
      `database: FerretDB exited unexpectedly (${code !== null ? `code ${code}` : signal})` +
        (output.trim() ? `: ${tail(output, 3).replace(/\s*\n\s*/g, ' | ')}` : ''),
    );
  });
  log(`database: FerretDB ${version} (SQLite) listening on ${host}:${port}`);
  return { uri, version, dataDir, pid: child.pid, stop };
}
