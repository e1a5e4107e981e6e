import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

/**
 * Access tokens of OpenID Connect providers (src/auth/oidc): the trusted issuers and how tokens
 * and their keys are checked. Without OIDC_ISSUERS no token is accepted.
 */
export class OidcVariables {
  /** JSON list of trusted issuers (src/config/oidc-issuers.ts; docs/keys.md, "Authentication"). */
  @IsOptional()
  @IsString()
  OIDC_ISSUERS?: string;

  /** Seconds `exp`, `nbf` and `iat` may be off by (clocks of the provider and the service). */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(300)
  OIDC_CLOCK_SKEW_S = 60;

  /** When set, a token older than this (by `iat`, s) is refused, whatever its `exp` says. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(604_800)
  OIDC_MAX_TOKEN_AGE_S?: number;

  /** How long an issuer's fetched JWKS is used before it is fetched again (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(86_400_000)
  OIDC_JWKS_MAX_AGE_MS = 600_000;

  /**
   * A token signed with a key the cached JWKS lacks makes the instance fetch the JWKS again, at
   * most once per this many ms per issuer (a rotated key is found, made-up `kid`s cost nothing).
   * A failed fetch pauses fetching from the issuer for as long (the 503's Retry-After).
   */
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  OIDC_JWKS_COOLDOWN_MS = 30_000;

  /** How long a fetch of a discovery document or a JWKS may take (ms). */
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  OIDC_FETCH_TIMEOUT_MS = 5_000;

  /**
   * Verified tokens an instance remembers (by SHA-256, until their `exp` or maximum age) at most;
   * 0: every request's token is verified. docs/authentication.md, "Access tokens: what is checked".
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  OIDC_TOKEN_CACHE_SIZE = 10_000;

  /**
   * How long an instance trusts what it read of an identity (which profile a token's subject
   * is): an identity unlinked or erased through another instance is seen within this long (ms).
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(60_000)
  OIDC_IDENTITY_CACHE_MS = 5_000;
}
