import type { CustomerPrincipal } from './principal';
import type { VerifiedToken } from './oidc/verified-token';

/**
 * Who a verified access token is: the identity (issuer, subject) linked to a user, and the root
 * or sub profile its client acts as. Auth declares the port and the composition root plugs in
 * the module that owns identities (src/identity), so auth depends on no feature module.
 */
export interface TokenPrincipals {
  /**
   * The principal `token` acts as in `branch` (the request's X-Branch): its identity's root
   * profile for a root client, else the sub profile (root, client, account). Provisions what is
   * missing when the issuer's `provision` allows, else throws UnknownIdentityError.
   */
  principalOf(token: VerifiedToken, branch: string): Promise<CustomerPrincipal>;
  /** Of these identity ids, those that still exist: one command, never a cache (open streams). */
  existingAmong(identityIds: string[]): Promise<string[]>;
}

export const TOKEN_PRINCIPALS = Symbol('TokenPrincipals');
