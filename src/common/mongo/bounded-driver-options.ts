import type { AppConfig } from '../../config';

/** The driver's shortest heartbeat interval. */
const MIN_HEARTBEAT_MS = 500;

/**
 * Driver settings that bound every operation when the database is dead, frozen or partitioned
 * (an open connection to a stopped process never errors by itself). The installed driver ignores
 * `timeoutMS`, so the bound comes from server monitoring: a heartbeat every half selection
 * timeout (S / 2, at least 500 ms) on its own connection, timing out after S / 2, marks the server
 * unknown within S of a freeze and interrupts every operation in flight on it; later operations
 * then fail server selection. Each heartbeat costs the idle instance about 1.5 ms of CPU, so it
 * comes no more often than that bound needs (docs/deployment.md, "Idle cost"). A
 * slow query on a healthy server is not cut short (the heartbeat still answers), so
 * QUERY_TIMEOUT_MS keeps its meaning; socketTimeoutMS is only a backstop above it. Retries are
 * off because a retry would wait a whole selection timeout again; the client gets 503 with
 * Retry-After instead.
 */
export function boundedDriverOptions(database: AppConfig['database']) {
  const selection = database.serverSelectionTimeoutMs;
  return {
    serverSelectionTimeoutMS: selection,
    heartbeatFrequencyMS: Math.max(MIN_HEARTBEAT_MS, Math.ceil(selection / 2)),
    connectTimeoutMS: Math.ceil(selection / 2),
    socketTimeoutMS: Math.max(database.queryTimeoutMs, selection) + selection,
    retryReads: false,
    retryWrites: false,
  };
}

/**
 * Driver settings for one attempt to reach the database at start (the first ping): the connect
 * and server-selection timeouts are DB_BOOT_ATTEMPT_TIMEOUT_MS, capped by `leftMs` (what is left
 * of DB_BOOT_TIMEOUT_MS). A host starved of CPU runs a connection's timer before its connect
 * event when the process was off the CPU for longer than the timeout, so the request-time connect
 * timeout (half the selection timeout) fails every attempt there; a start can afford to wait
 * longer per attempt than a request ever does. Nothing of the running app uses these settings.
 */
export function bootDriverOptions(database: AppConfig['database'], leftMs: number) {
  const timeout = Math.max(1, Math.min(database.bootAttemptTimeoutMs, Math.ceil(leftMs)));
  return {
    serverSelectionTimeoutMS: timeout,
    connectTimeoutMS: timeout,
    socketTimeoutMS: timeout,
    retryReads: false,
    retryWrites: false,
  };
}
