import type { Tenant } from '../common/tenancy/namespace';
import { FULL_GRANT, type AccessGrant } from './access-grant';

/**
 * Who is calling, resolved from the API key by ApiKeyGuard; `branch` is the request branch and
 * `boundBranch` the branch the key itself is bound to (null: unbound, the branch came from
 * X-Branch).
 */
export type Principal =
  | {
      kind: 'root';
      keyId: string;
      subject: string;
      branch: string;
      boundBranch: string | null;
      /** What the credential may do; absent: everything its kind may (src/auth/access-grant.ts). */
      grant?: AccessGrant;
    }
  | {
      kind: 'sub';
      keyId: string;
      subject: string;
      clientId: string;
      accountId: string;
      profileId: string;
      branch: string;
      boundBranch: string | null;
      grant?: AccessGrant;
    }
  | {
      kind: 'team';
      keyId: string;
      teamId: string;
      branch: string;
      boundBranch: string | null;
      /** A member's root key acting for the team (X-Team): the member's subject. */
      actingSubject?: string;
      grant?: AccessGrant;
    }
  | { kind: 'operator'; branch: string };

export type PrincipalKind = Principal['kind'];

/** What the principal may do: its credential's grant, or everything (the operator key, keys without limits). */
export function grantOf(principal: Principal): AccessGrant {
  return (principal.kind === 'operator' ? undefined : principal.grant) ?? FULL_GRANT;
}
export type CustomerPrincipal = Exclude<Principal, { kind: 'operator' }>;

/** Whose data a request works in (the one definition lives with the namespace it is part of). */
export type { Tenant };

export function tenantOf(principal: CustomerPrincipal): Tenant {
  switch (principal.kind) {
    case 'root':
    case 'sub':
      return { kind: 'user', id: principal.subject };
    case 'team':
      return { kind: 'team', id: principal.teamId };
  }
}

/** The value stamped into a data item's owner field: subject, accountId or teamId. */
export function ownerValueOf(principal: CustomerPrincipal): string {
  switch (principal.kind) {
    case 'root':
      return principal.subject;
    case 'sub':
      return principal.accountId;
    case 'team':
      return principal.teamId;
  }
}
