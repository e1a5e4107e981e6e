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
  if (principal.kind === 'operator') return 'operator';
  // One publishable key serves every visitor of a site: each client address has its own budget
  // of it (RATE_LIMIT_PUBLISHABLE_MAX), so one visitor cannot spend the others'.
  if (principal.kind === 'publishable')
    return `${credentialIdOf(principal)}|ip:${req.ip ?? 'unknown'}`;
  return credentialIdOf(principal);
}

/** Whether the request's budget is a publishable key's (RATE_LIMIT_PUBLISHABLE_MAX). */
export function isPublishableRequest(req: RequestWithPrincipal): boolean {
  return req.principal?.kind === 'publishable';
}
