import type { Request } from 'express';
import type { Tenant } from '../common/tenancy/namespace';
import type { RequestWithPrincipal } from './auth.decorators';
import { tenantOf } from './principal';

/**
 * Whose usage a request is: the tenant of its principal (a user, for root and sub keys and
 * publishable keys of the user; a team). The operator's requests, and those without a principal,
 * are nobody's: they are not metered.
 */
export function usageTenantOf(req: Request): Tenant | null {
  const principal = (req as RequestWithPrincipal).principal;
  if (!principal || principal.kind === 'operator') return null;
  return tenantOf(principal);
}
