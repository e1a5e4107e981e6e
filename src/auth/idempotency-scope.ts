import type { Request } from 'express';
import type { IdempotencyScope } from '../idempotency';
import type { RequestWithPrincipal } from './auth.decorators';
import { tenantOf, type Principal } from './principal';

/**
 * Who owns a request's Idempotency-Keys: the principal as a person or party — a user (any of its
 * root keys), a sub profile, a team, the operator — not one API key, so a retry with a rotated key
 * is still recognised; and the request branch, so a key never reaches across branches.
 */
export function idempotencyScopeOf(req: Request): IdempotencyScope | null {
  const principal = (req as RequestWithPrincipal).principal;
  if (!principal) return null;
  return {
    principal: identityOf(principal),
    branch: principal.branch,
    tenant: principal.kind === 'operator' ? null : tenantOf(principal),
  };
}

function identityOf(principal: Principal): string {
  switch (principal.kind) {
    case 'root':
      return `user:${principal.subject}`;
    case 'sub':
      return `sub:${principal.subject}:${principal.profileId}`;
    case 'team':
      return `team:${principal.teamId}`;
    case 'publishable':
      // It writes nothing; its replays, were there any, would be its own key's.
      return `publishable:${principal.credential.kind === 'key' ? principal.credential.keyId : ''}`;
    case 'operator':
      return 'operator';
  }
}
