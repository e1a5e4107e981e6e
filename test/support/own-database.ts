import {
  readDevDatabaseSettings,
  removeThrowawayDataDir,
  resolveDatabase,
  throwawayDataDir,
  type ResolvedDatabase,
} from '../../tools/dev-database';

/** A database server of one test file's own, which the file may freeze (SIGSTOP) and thaw. */
export interface OwnDatabase {
  /** Its address, without a database in the path (`mongodb://127.0.0.1:<port>/`). */
  uri: string;
  freeze(): void;
  /** Resumes it if frozen; safe to call in any state, also after a failure. */
  thaw(): void;
  stop(): Promise<void>;
}

/**
 * Starts a server the way the run resolves its database (FerretDB or mongodb-memory-server), but
 * always one of the file's own, so that freezing it or filling it affects no other test file.
 * `ferretdbArgs` go to FerretDB's command line when FerretDB is what starts.
 */
export async function startOwnDatabase(
  prefix: string,
  ferretdbArgs?: readonly string[],
): Promise<OwnDatabase> {
  const dataDir = throwawayDataDir(`pds-${prefix}-`);
  const database: ResolvedDatabase = await resolveDatabase({
    ...readDevDatabaseSettings(),
    dataDir,
    log: () => undefined,
    ferretdbArgs,
  });
  const stop = async () => {
    await database.stop();
    removeThrowawayDataDir(dataDir);
  };
  const pid = database.pid;
  if (pid === undefined) {
    await stop();
    throw new Error('the test database has no known pid: it cannot be frozen');
  }
  let frozen = false;
  return {
    uri: database.uri,
    freeze: () => {
      process.kill(pid, 'SIGSTOP');
      frozen = true;
    },
    thaw: () => {
      if (!frozen) return;
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Already gone.
      }
      frozen = false;
    },
    stop,
  };
}
