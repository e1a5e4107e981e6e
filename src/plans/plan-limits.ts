import type { AppConfig } from '../config';

/**
 * What a plan can limit, per tenant (a user's or a team's data, in every branch) unless named
 * otherwise. A plan that leaves one out gets the deployment's setting (in brackets):
 * - `collections`: collections per namespace (tenant and branch) [MAX_COLLECTIONS];
 * - `indexesPerCollection`: indexes of one collection [MAX_INDEXES];
 * - `itemsPerCollection`: items of one collection [MAX_ITEMS_PER_COLLECTION; unset: unlimited];
 * - `fileBytes`: bytes of the tenant's stored files [FILE_QUOTA_BYTES];
 * - `webhooks`: webhooks per namespace [WEBHOOK_MAX];
 * - `requestsPerWindow`: requests of one key per RATE_LIMIT_WINDOW_MS [RATE_LIMIT_MAX];
 * - `streamsPerKey`: open event streams of one key [EVENTS_MAX_STREAMS_PER_KEY];
 * - `importBytes`: bytes of one POST /import body [IMPORT_MAX_BYTES].
 */
export const PLAN_LIMIT_NAMES = [
  'collections',
  'indexesPerCollection',
  'itemsPerCollection',
  'fileBytes',
  'webhooks',
  'requestsPerWindow',
  'streamsPerKey',
  'importBytes',
] as const;

export type PlanLimitName = (typeof PLAN_LIMIT_NAMES)[number];

/** Every limit's value; null: no limit (only `itemsPerCollection` has none by default). */
export type LimitValues = Record<PlanLimitName, number | null>;

/** The limits of a plan as the operator set them: any subset. */
export type PlanLimits = Partial<LimitValues>;

/** The limits that apply without a plan: the deployment's settings. */
export function deploymentLimits(config: AppConfig): LimitValues {
  return {
    collections: config.limits.maxCollections,
    indexesPerCollection: config.limits.maxIndexes,
    itemsPerCollection: config.limits.maxItemsPerCollection,
    fileBytes: config.files.quotaBytes,
    webhooks: config.webhooks.max,
    requestsPerWindow: config.limits.rateLimitMax,
    streamsPerKey: config.events.maxStreamsPerKey,
    importBytes: config.limits.importMaxBytes,
  };
}

/** A plan's limits over the deployment's: what the plan leaves out falls back. */
export function limitsUnder(plan: PlanLimits, deployment: LimitValues): LimitValues {
  const limits = { ...deployment };
  for (const name of PLAN_LIMIT_NAMES) if (plan[name] !== undefined) limits[name] = plan[name];
  return limits;
}

/**
 * The largest value a plan may set for each limit: the bound of the matching setting (docs/configuration-reference.md); `itemsPerCollection`, which has none, a billion. Every limit is at least 0
 * (0: nothing may grow), but `itemsPerCollection` at least 1.
 */
export const PLAN_LIMIT_MAX: Record<PlanLimitName, number> = {
  collections: 10_000,
  indexesPerCollection: 63,
  itemsPerCollection: 1_000_000_000,
  fileBytes: 2 ** 50,
  webhooks: 1000,
  requestsPerWindow: 1_000_000_000,
  streamsPerKey: 10_000,
  importBytes: 1024 ** 4,
};

/** A plan's name in the catalogue: 1-64 of letters, digits, `.`, `_` and `-`, starting with a letter or digit. */
export const PLAN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
