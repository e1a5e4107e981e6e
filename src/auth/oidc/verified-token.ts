import type { OidcIssuerConfig } from '../../config';
import type { Scope } from '../access-grant';

/**
 * An access token whose signature, issuer, audience and times were verified (TokenVerifier),
 * with the claims the service reads, under the names its issuer's configuration gives them.
 */
export interface VerifiedToken {
  /** The configured issuer it came from. */
  issuer: OidcIssuerConfig;
  /** The subject claim: with the issuer, the identity. */
  subject: string;
  /** The client it was issued to (`azp`, then `client_id`): a token naming none is refused. */
  clientId: string;
  /** The `accountId` of the sub profile a non-root client acts as (the subject by default). */
  accountId: string;
  /** The email claim, when present. */
  email: string | null;
  /** The service's scopes it holds (its scope claim mapped, or the issuer's defaultScopes); null: all. */
  scopes: readonly Scope[] | null;
  /** Its `exp`: no request is accepted with it from then on. */
  expiresAt: Date;
}
