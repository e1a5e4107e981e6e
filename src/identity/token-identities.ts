import { Injectable } from '@nestjs/common';
import type { CustomerPrincipal } from '../auth';
import type { VerifiedToken } from '../auth/oidc/verified-token';
import type { TokenPrincipals } from '../auth/token-principals.port';
import { UnknownIdentityError } from '../auth/auth.errors';

/** Resolves verified access tokens to the profiles of their identities (README "Authentication"). */
@Injectable()
export class TokenIdentities implements TokenPrincipals {
  principalOf(token: VerifiedToken, _branch: string): Promise<CustomerPrincipal> {
    return Promise.reject(new UnknownIdentityError(token.issuer.issuer, token.subject));
  }

  existingAmong(_identityIds: string[]): Promise<string[]> {
    return Promise.resolve([]);
  }
}
