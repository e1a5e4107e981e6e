/** The request classes a route is metered as (docs/usage.md, "Usage", docs/usage.md). */
export const REQUEST_CLASSES = ['read', 'write', 'stream', 'export', 'import'] as const;
export type RequestClass = (typeof REQUEST_CLASSES)[number];

/** What is counted per tenant and UTC day; every member a sum, so batches add up. */
export const USAGE_COUNTERS = [
  ...REQUEST_CLASSES,
  /** How long the tenant's event streams and long polls stayed open, in milliseconds. */
  'streamMs',
  'bytesIn',
  'bytesOut',
  /** Change-feed events a tenant's webhooks answered with 2xx. */
  'webhookEvents',
] as const;
export type UsageCounter = (typeof USAGE_COUNTERS)[number];

export type UsageCounts = Record<UsageCounter, number>;

export function emptyCounts(): UsageCounts {
  return Object.fromEntries(USAGE_COUNTERS.map((name) => [name, 0])) as UsageCounts;
}

const COUNTER_NAMES: ReadonlySet<string> = new Set(USAGE_COUNTERS);

/**
 * Adds `more` into `into` (in place) and returns it, visiting only the members `more` has (a
 * request's counts carry two or three of the nine).
 */
export function addCounts(into: UsageCounts, more: Partial<UsageCounts>): UsageCounts {
  for (const name of Object.keys(more)) {
    if (COUNTER_NAMES.has(name)) into[name as UsageCounter] += more[name as UsageCounter] ?? 0;
  }
  return into;
}
