import type { Request } from 'express';
import { presentedKeyDigest } from './api-key.guard';

/**
 * Whose request budget a request counts against: its API key (the key's digest, never the
 * secret), or its client address when it has none. The rate limit runs after ApiKeyGuard, so the
 * keys it counts are keys that authenticated.
 */
export function rateLimitTrackerOf(req: Request): string {
  const digest = presentedKeyDigest(req);
  return digest ? `key:${digest}` : `ip:${req.ip ?? 'unknown'}`;
}
