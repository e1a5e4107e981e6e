import { createContext, Script } from 'node:vm';

/**
 * Runs synchronous work — compiling a schema, checking items against it — for at most `ms`
 * milliseconds of this thread. V8 stops the work where it stands when the time is up (Node's
 * `vm` timeout watchdog), so nothing a schema or an item makes Ajv do holds the event loop longer:
 * other requests, `/health` among them, wait at most that long behind it.
 */
const context = createContext({ work: undefined as (() => unknown) | undefined });
const script = new Script('work()', { filename: 'schema-budget' });

export class BudgetExceeded extends Error {
  constructor(readonly ms: number) {
    super(`took over ${ms} ms`);
  }
}

export interface BudgetOptions {
  /**
   * How many more times work stopped by its budget runs when the process had the CPU for less
   * than half of that budget meanwhile: the host was busy (the work waited for a core), not the
   * work costly. Only for work that can run again (no state left behind by a stop).
   */
  readonly retriesWhenStarved?: number;
  /** The CPU time the process has used so far, in ms (every thread's, from process.cpuUsage). */
  readonly cpuMs?: () => number;
}

const processCpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

export function withinBudget<T>(ms: number, work: () => T, options: BudgetOptions = {}): T {
  const { retriesWhenStarved: retries = 0, cpuMs = processCpuMs } = options;
  for (let attempt = 0; ; attempt += 1) {
    const before = cpuMs();
    try {
      return runFor(ms, work);
    } catch (error) {
      if (!(error instanceof BudgetExceeded) || attempt >= retries) throw error;
      // The whole process's CPU (every thread's): it errs towards refusing, never towards
      // letting costly work run on.
      if (cpuMs() - before >= ms / 2) throw error;
    }
  }
}

function runFor<T>(ms: number, work: () => T): T {
  const previous = context.work as (() => unknown) | undefined;
  context.work = work;
  try {
    return script.runInContext(context, { timeout: ms }) as T;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT')
      throw new BudgetExceeded(ms);
    throw error;
  } finally {
    context.work = previous;
  }
}
