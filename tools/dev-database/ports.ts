import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

const LOOPBACK = '127.0.0.1';

/** A port that was free a moment ago on `host` (the OS picks it; the caller binds it soon after). */
export function findFreePort(host = LOOPBACK): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() =>
        port === undefined ? reject(new Error('no port assigned')) : resolve(port),
      );
    });
  });
}

/**
 * Ports for servers started as child processes (the service in tests, the contract run and the
 * benchmark). A port found free and handed to a child is free only until someone else binds it,
 * and a child binds it only after it booted (seconds on a busy machine): another server started
 * meanwhile may take it, and requests meant for the child then reach that server. On Linux the
 * child is given PORT=0 and its port is read from /proc once it listens; elsewhere a free port is
 * chosen beforehand, as before.
 */
const PROC_SOCKETS = existsSync('/proc/self/fd') && existsSync('/proc/net/tcp');

/** The PORT to give a child: 0 where its port can be read back (childPort), else a free port. */
export async function portForChild(): Promise<number> {
  return PROC_SOCKETS ? 0 : findFreePort();
}

/**
 * The port `child`, started with `given` (from portForChild), listens on: `given` itself when it
 * is not 0; else read from /proc, waiting until it listens. Undefined when it exits first or
 * does not listen within `withinMs`.
 */
export async function childPort(
  child: ChildProcess,
  given: number,
  withinMs: number,
): Promise<number | undefined> {
  if (given !== 0) return given;
  const deadline = Date.now() + withinMs;
  for (;;) {
    const port = child.pid === undefined ? undefined : listeningPortOf(child.pid);
    if (port !== undefined) return port;
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline)
      return undefined;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The TCP port process `pid` listens on: its socket inodes (/proc/<pid>/fd) matched against the
 * listening sockets of /proc/net/tcp and tcp6. Undefined until it listens, or once it is gone.
 */
function listeningPortOf(pid: number): number | undefined {
  let inodes: Set<string>;
  try {
    inodes = new Set(
      readdirSync(`/proc/${pid}/fd`)
        .map((fd) => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return ''; // closed meanwhile
          }
        })
        .filter((link) => link.startsWith('socket:['))
        .map((link) => link.slice('socket:['.length, -1)),
    );
  } catch {
    return undefined; // exited
  }
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const row of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const [, local, , state, , , , , , inode] = row.trim().split(/\s+/);
      if (state === '0A' && local !== undefined && inode !== undefined && inodes.has(inode))
        return parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
    }
  }
  return undefined;
}
