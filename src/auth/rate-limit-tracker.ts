import type { RequestWithPrincipal } from './auth.decorators';
import { credentialIdOf } from './principal';

/**
 * Whose request budget a request counts against: the API key ApiKeyGuard authenticated (by its
 * id; the operator key has one budget of its own), or the client address on a public route,
 * where no key is authenticated: a key presented there is not read, so made-up keys cannot open
 * budgets of their own. The rate limit runs after ApiKeyGuard.
 */
export function rateLimitTrackerOf(req: RequestWithPrincipal): string {
  const principal = req.principal;
  if (!principal) return `ip:${req.ip ?? 'unknown'}`;
  return principal.kind === 'operator' ? 'operator' : credentialIdOf(principal);
}
