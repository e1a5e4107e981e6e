import type { Tenant } from '../common/tenancy/namespace';
import { FULL_GRANT, type AccessGrant } from './access-grant';

/**
 * How a customer principal authenticated: with an API key, or with an access token of a trusted
 * identity provider (src/auth/oidc), as the identity (issuer, subject) `identityId` names.
 */
export type Credential =
  | { kind: 'key'; keyId: string; /** When the key expires; null: never. */ expiresAt: Date | null }
  | {
      kind: 'token';
      issuer: string;
      /** The token's subject claim at its issuer. */
      subject: string;
      /** The stored identity (issuer, subject) the token was resolved to. */
      identityId: string;
      expiresAt: Date;
    };

/**
 * Who is calling, resolved from the API key or access token by ApiKeyGuard; `branch` is the
 * request branch and `boundBranch` the branch the key itself is bound to (null: unbound, the
 * branch came from X-Branch; always null for a token).
 */
export type Principal =
  | {
      kind: 'root';
      credential: Credential;
      subject: string;
      branch: string;
      boundBranch: string | null;
      /** What the credential may do; absent: everything its kind may (src/auth/access-grant.ts). */
      grant?: AccessGrant;
    }
  | {
      kind: 'sub';
      credential: Credential;
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
      credential: Credential;
      teamId: string;
      branch: string;
      boundBranch: string | null;
      /** A member's root key acting for the team (X-Team): the member's subject. */
      actingSubject?: string;
      grant?: AccessGrant;
    }
  | {
      /**
       * A publishable key (safe in a browser page): reads only the collections its grant names,
       * each through the collection's `public.read` rule, from its `allowedOrigins`.
       */
      kind: 'publishable';
      credential: Credential;
      /** Whose data it reads: the user (subject) or the team that minted it. */
      tenant: Tenant;
      /** Origins (`scheme://host[:port]`) a browser may call with it (CORS). */
      allowedOrigins: readonly string[];
      branch: string;
      boundBranch: string | null;
      grant?: AccessGrant;
    }
  | { kind: 'operator'; branch: string };

export type PrincipalKind = Principal['kind'];

/** What the principal may do: its credential's grant, or everything (the operator key, keys without limits). */
export function grantOf(principal: Principal): AccessGrant {
  return (principal.kind === 'operator' ? undefined : principal.grant) ?? FULL_GRANT;
}
export type CustomerPrincipal = Exclude<Principal, { kind: 'operator' }>;

/**
 * One string per credential: what budgets and counts per credential are kept by (the rate
 * limit, open streams). Every token of one identity is one credential.
 */
export function credentialIdOf(principal: CustomerPrincipal): string {
  const { credential } = principal;
  return credential.kind === 'key' ? `key:${credential.keyId}` : `token:${credential.identityId}`;
}

/**
 * When the key a principal authenticated with expires (null: never, the operator key, or a
 * token — whose keys are bounded by its scopes, docs/authentication.md, "What a token cannot do that a key can").
 */
export function keyExpiryOf(principal: Principal): Date | null {
  return principal.kind !== 'operator' && principal.credential.kind === 'key'
    ? principal.credential.expiresAt
    : null;
}

/** The API key a principal authenticated with; null for a token. */
export function keyIdOf(principal: CustomerPrincipal): string | null {
  return principal.credential.kind === 'key' ? principal.credential.keyId : null;
}

/** Whose data a request works in (the one definition lives with the namespace it is part of). */
export type { Tenant };

export function tenantOf(principal: CustomerPrincipal): Tenant {
  switch (principal.kind) {
    case 'root':
    case 'sub':
      return { kind: 'user', id: principal.subject };
    case 'team':
      return { kind: 'team', id: principal.teamId };
    case 'publishable':
      return principal.tenant;
  }
}

/**
 * The value stamped into a data item's owner field: subject, accountId or teamId. A publishable
 * key writes nothing (every write route refuses it); its tenant's id stands in for it.
 */
export function ownerValueOf(principal: CustomerPrincipal): string {
  switch (principal.kind) {
    case 'root':
      return principal.subject;
    case 'sub':
      return principal.accountId;
    case 'team':
      return principal.teamId;
    case 'publishable':
      return principal.tenant.id;
  }
}
