import type { Request } from 'express';

/**
 * How many requests a request's budget allows per window (RATE_LIMIT_WINDOW_MS): the
 * composition root provides it (a tenant's `requestsPerWindow`, its plan's or RATE_LIMIT_MAX),
 * so this module knows nothing of tenants or plans. Read for every request it counts: it must
 * answer without a database read. Null: no limit (nothing is counted).
 */
export abstract class RequestAllowance {
  abstract of(req: Request): Promise<number | null>;
}
