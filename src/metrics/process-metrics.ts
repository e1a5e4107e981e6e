import { collectDefaultMetrics, Registry } from 'prom-client';

let shared: Registry | undefined;

/**
 * How often the event-loop delay is sampled (ms). prom-client's default, 10 ms, wakes the process
 * 100 times a second: about 5 ms of CPU per second on an idle instance, as much as everything
 * else it does idle. A stall still shows in full (the next sample comes that much late); only
 * the delays between samples shorter than this go unseen.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * The process's own metrics (CPU, memory, heap spaces, handles, GC, event-loop lag), in a registry
 * of their own that every app of the process shares: they describe the process, not an app, and
 * prom-client's collectors start observers (GC, event-loop delay) that are never stopped, so
 * they are started once per process rather than once per app.
 */
export function processMetrics(): Registry {
  if (!shared) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
  return shared;
}
