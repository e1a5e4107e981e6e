import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * The interpreters Schemathesis may run on, in order of preference. 3.11 is left out on purpose:
 * a Schemathesis 4.32 run of this API crashed inside Schemathesis under Python 3.11.7 and ran
 * clean under 3.12; the contract run is checked on 3.12 only.
 */
export const PREFERRED_PYTHONS = ['3.12', '3.13'] as const;
const MINIMUM: readonly [number, number] = [3, 12];

export interface Python {
  /** The interpreter's real path (not a version manager's shim). */
  executable: string;
  version: string;
  /** How it was found, for the summary. */
  via: string;
}

export interface Schemathesis {
  /** The virtual environment's interpreter; `python -m schemathesis.cli` runs Schemathesis. */
  python: string;
  version: string;
  interpreter: Python;
  venv: string;
}

const PROBE = 'import sys; print("%d.%d.%d" % sys.version_info[:3]); print(sys.executable)';

/** Runs `command` as a Python interpreter; undefined when it is missing or does not run. */
async function probe(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Omit<Python, 'via'> | undefined> {
  try {
    const { stdout } = await execFileAsync(command, ['-c', PROBE], { env, timeout: 15_000 });
    const [version, executable] = stdout.trim().split('\n');
    return version && executable ? { version, executable } : undefined;
  } catch {
    return undefined;
  }
}

export function meetsMinimum(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
}

/**
 * The interpreter for Schemathesis, chosen the same way on every machine: `python3.12`, then
 * `python3.13` on PATH; then the newest pyenv-installed 3.12, then 3.13 (pyenv's shims refuse a
 * version that is installed but not selected); then `python3` if it is 3.12 or newer.
 */
export async function findPython(): Promise<Python> {
  const tried: string[] = [];
  for (const minor of PREFERRED_PYTHONS) {
    const found = await probe(`python${minor}`);
    if (found) return { ...found, via: `python${minor} on PATH` };
    tried.push(`python${minor}`);
  }
  for (const minor of PREFERRED_PYTHONS) {
    const latest = await execFileAsync('pyenv', ['latest', minor], { timeout: 15_000 }).then(
      ({ stdout }) => stdout.trim(),
      () => '',
    );
    if (!latest) {
      tried.push(`pyenv ${minor}`);
      continue;
    }
    const found = await probe(`python${minor}`, { ...process.env, PYENV_VERSION: latest });
    if (found) return { ...found, via: `pyenv ${latest}` };
    tried.push(`pyenv ${latest}`);
  }
  const fallback = await probe('python3');
  if (fallback && meetsMinimum(fallback.version)) return { ...fallback, via: 'python3 on PATH' };
  tried.push(fallback ? `python3 (${fallback.version}, too old)` : 'python3');
  throw new Error(
    `Schemathesis needs Python ${MINIMUM.join('.')} or newer; tried ${tried.join(', ')}. ` +
      'Install Python 3.12 (for example `pyenv install 3.12`).',
  );
}

/** The pinned Schemathesis version: the `schemathesis==` line of the requirements file. */
export function pinnedVersion(requirements: string): string {
  const pin = /^schemathesis==(\S+)\s*$/m.exec(requirements)?.[1];
  if (!pin) throw new Error('the requirements file pins no schemathesis==<version>');
  return pin;
}

/** One environment per pinned set and interpreter minor version; a new pin gets a new one. */
export function venvName(requirements: string, python: Python): string {
  const digest = createHash('sha256').update(requirements).digest('hex').slice(0, 12);
  const minor = python.version.split('.').slice(0, 2).join('.');
  return `schemathesis-${pinnedVersion(requirements)}-py${minor}-${digest}`;
}

/**
 * Schemathesis from `requirementsPath`, installed from PyPI into `<cacheDir>/schemathesis/<name>`
 * on first use and reused afterwards. The environment is built in a temporary directory and
 * renamed into place when complete, so an interrupted install never leaves a half environment
 * that a later run would trust.
 */
export async function ensureSchemathesis(
  cacheDir: string,
  requirementsPath: string,
  log: (message: string) => void,
): Promise<Schemathesis> {
  const requirements = readFileSync(requirementsPath, 'utf8');
  const version = pinnedVersion(requirements);
  const interpreter = await findPython();
  const root = join(cacheDir, 'schemathesis');
  const venv = join(root, venvName(requirements, interpreter));
  const python = join(venv, 'bin', 'python');
  if (existsSync(join(venv, 'installed'))) {
    return { python, version, interpreter, venv };
  }

  log(
    `schemathesis: installing ${version} with Python ${interpreter.version} (${interpreter.via}) into ${venv} (first run only)`,
  );
  await mkdir(root, { recursive: true });
  const building = await mkdtemp(join(root, '.install-'));
  try {
    await execFileAsync(interpreter.executable, ['-m', 'venv', building], { timeout: 120_000 });
    await execFileAsync(
      join(building, 'bin', 'python'),
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirementsPath],
      { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
    ).catch((error: unknown) => {
      const stderr =
        typeof error === 'object' && error !== null && 'stderr' in error
          ? String(error.stderr).trim().split('\n').slice(-8).join('\n')
          : String(error);
      throw new Error(`pip could not install ${requirementsPath}:\n${stderr}`);
    });
    await writeFile(join(building, 'installed'), `${version}\n`);
    try {
      await rename(building, venv);
    } catch (error) {
      // Another run finished the same environment first; theirs is as good as ours.
      if (!existsSync(join(venv, 'installed'))) throw error;
    }
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return { python, version, interpreter, venv };
}
