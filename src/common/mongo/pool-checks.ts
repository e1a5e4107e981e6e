import type { MongoClient } from 'mongodb';

/**
 * How often each connection pool of a client checks itself: 1 s, where the driver's default is
 * 100 ms. The check (`minPoolSizeCheckFrequencyMS`) prunes connections past their idle time and
 * opens connections up to `minPoolSize`, which the service leaves at 0; at 100 ms it woke an idle
 * instance ten times a second per pool, about 2.5 ms of CPU a second (docs/deployment.md, "Idle
 * cost"). Nothing waits for it: a request that needs a connection opens one itself.
 */
export const POOL_CHECK_INTERVAL_MS = 1000;

/** The one setting of a client's parsed options that the driver reads and does not accept. */
interface PoolCheckOptions {
  minPoolSizeCheckFrequencyMS?: number;
}

/**
 * Sets the pools' check interval of `client`, before it connects: the driver takes the interval
 * from the client's parsed options when it creates a server's pool, but refuses it among the
 * options a client is constructed with (it is meant for the driver's own tests). Kept here, in
 * one place, and checked by pool-checks.spec.ts against the installed driver, so an upgrade that
 * drops the setting fails that test rather than bring the wake-ups back unnoticed.
 */
export function checkPoolsEvery<T extends MongoClient>(
  client: T,
  intervalMs = POOL_CHECK_INTERVAL_MS,
): T {
  if ((client as unknown as { topology?: unknown }).topology)
    throw new Error('the pool checks of a client are set before it connects');
  (client.options as PoolCheckOptions).minPoolSizeCheckFrequencyMS = intervalMs;
  return client;
}
