import type { ServerResponse } from 'node:http';

/**
 * Why a request was refused with 429: `rate_limit` is the per-key budget (per client address
 * without a key), `auth_failures` the failed-authentication budget of the client address. Both
 * answer RATE_LIMITED; the request metrics count them apart.
 */
export type RateLimitReason = 'rate_limit' | 'auth_failures';

export const RATE_LIMIT_REASONS: readonly RateLimitReason[] = ['rate_limit', 'auth_failures'];

const REASON = Symbol('rateLimitReason');

type Marked = ServerResponse & { [REASON]?: RateLimitReason };

/** Called where a 429 is decided, so the limiter needs to know nothing about metrics. */
export function markRateLimited(res: ServerResponse, reason: RateLimitReason): void {
  (res as Marked)[REASON] = reason;
}

export function rateLimitReasonOf(res: ServerResponse): RateLimitReason | undefined {
  return (res as Marked)[REASON];
}
