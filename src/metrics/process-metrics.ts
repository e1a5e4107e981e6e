import { collectDefaultMetrics, Registry } from 'prom-client';

let shared: Registry | undefined;

/**
 * The process's own metrics (CPU, memory, heap spaces, handles, GC, event-loop lag), in a registry
 * of their own that every app of the process shares: they describe the process, not an app, and
 * prom-client's collectors start observers (GC, event-loop delay) that are never stopped, so
 * they are started once per process rather than once per app.
 */
export function processMetrics(): Registry {
  if (!shared) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared });
  }
  return shared;
}
