import type { AppConfig } from '../../config';

/**
 * Driver settings that bound every operation when the database is dead, frozen or partitioned
 * (an open connection to a stopped process never errors by itself). The installed driver ignores
 * `timeoutMS`, so the bound comes from server monitoring: a heartbeat every 500 ms on its own
 * connection, timing out after half the selection timeout, marks the server unknown and
 * interrupts every operation in flight on it; later operations then fail server selection. A
 * slow query on a healthy server is not cut short (the heartbeat still answers), so
 * QUERY_TIMEOUT_MS keeps its meaning; socketTimeoutMS is only a backstop above it. Retries are
 * off because a retry would wait a whole selection timeout again; the client gets 503 with
 * Retry-After instead.
 */
export function boundedDriverOptions(database: AppConfig['database']) {
  const selection = database.serverSelectionTimeoutMs;
  return {
    serverSelectionTimeoutMS: selection,
    heartbeatFrequencyMS: 500,
    connectTimeoutMS: Math.ceil(selection / 2),
    socketTimeoutMS: Math.max(database.queryTimeoutMs, selection) + selection,
    retryReads: false,
    retryWrites: false,
  };
}
