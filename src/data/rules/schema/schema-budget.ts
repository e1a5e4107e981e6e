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

export function withinBudget<T>(ms: number, work: () => T): T {
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
