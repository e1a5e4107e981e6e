import { accessSync, constants, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Shared memory on Linux: a tmpfs on every distribution, whatever the disk under /tmp. */
const MEMORY_ROOT = '/dev/shm';
/** `<prefix><pid>-<random>`: the process that made a directory, so that its leftovers can be told. */
const NAMED = /^pds-.*?-(\d+)-[A-Za-z0-9]{6}$/;

function usable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A new directory for a database that lives only as long as one run (the tests' servers, the
 * contract run's): in memory where the machine has a writable /dev/shm, else under the system's
 * temporary directory. FerretDB's SQLite handler syncs every commit to disk, which made a test
 * suite's writes wait on the disk for about half their time on an ordinary virtual disk; nothing
 * such a run keeps needs to survive it. The benchmark keeps its databases on disk, as a
 * deployment would.
 *
 * Memory is not given back by itself: the caller removes the directory when its database stops
 * (removeThrowawayDataDir), and a run that was killed before it could is cleaned up by the next
 * one, which removes the directories of processes that no longer exist.
 */
export function throwawayDataDir(prefix: `pds-${string}-`): string {
  const root = usable(MEMORY_ROOT) ? MEMORY_ROOT : tmpdir();
  for (const name of readdirSync(root)) {
    const pid = NAMED.exec(name)?.[1];
    if (pid !== undefined && !alive(Number(pid)))
      rmSync(join(root, name), { recursive: true, force: true });
  }
  return mkdtempSync(join(root, `${prefix}${process.pid}-`));
}

export function removeThrowawayDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
