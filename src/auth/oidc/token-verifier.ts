import { Inject, Injectable } from '@nestjs/common';
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
} from 'jose';
import { APP_CONFIG, type AppConfig, type OidcIssuerConfig } from '../../config';
import { isScope, type Scope } from '../access-grant';
import { InvalidTokenError } from '../auth.errors';
import type { VerifiedToken } from './verified-token';

/** The signature algorithms accepted: asymmetric only, never `none` or an HMAC. */
export const TOKEN_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

/**
 * Verifies access tokens of the issuers of OIDC_ISSUERS (README "Authentication"). Disabled —
 * no token accepted, every bearer credential read as an API key — without issuers.
 */
@Injectable()
export class TokenVerifier {
  readonly enabled: boolean;
  private readonly issuers: Map<string, OidcIssuerConfig>;
  private readonly keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.issuers = new Map(config.oidc.issuers.map((issuer) => [issuer.issuer, issuer]));
    this.enabled = this.issuers.size > 0;
  }

  async verify(token: string): Promise<VerifiedToken> {
    const { header, claims } = decoded(token);
    if (typeof header.alg !== 'string' || !TOKEN_ALGORITHMS.includes(header.alg))
      throw new InvalidTokenError(
        `The token's algorithm is not accepted; accepted: ${TOKEN_ALGORITHMS.join(', ')}.`,
      );
    const issuer = typeof claims.iss === 'string' ? this.issuers.get(claims.iss) : undefined;
    if (!issuer) throw new InvalidTokenError("The token's issuer (iss) is not a trusted issuer.");
    const { oidc } = this.config;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.keysOf(issuer), {
        issuer: issuer.issuer,
        audience: issuer.audiences,
        algorithms: TOKEN_ALGORITHMS,
        clockTolerance: oidc.clockSkewS,
        ...(oidc.maxTokenAgeS !== null ? { maxTokenAge: oidc.maxTokenAgeS } : {}),
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError) throw new InvalidTokenError(failedCheck(error));
      throw error;
    }
    return this.claimsOf(issuer, payload);
  }

  private claimsOf(issuer: OidcIssuerConfig, payload: JWTPayload): VerifiedToken {
    const { claims } = issuer;
    const subject = payload[claims.subject];
    if (typeof subject !== 'string' || subject.length === 0)
      throw new InvalidTokenError(`The token has no subject claim (${claims.subject}).`);
    const client = claims.client.map((name) => payload[name]).find((v) => typeof v === 'string');
    const accountId = payload[claims.accountId];
    const email = payload[claims.email];
    return {
      issuer,
      subject,
      clientId: typeof client === 'string' ? client : null,
      accountId: typeof accountId === 'string' ? accountId : subject,
      email: typeof email === 'string' ? email : null,
      scopes: scopesOf(issuer, payload),
      expiresAt: new Date((payload.exp ?? 0) * 1000),
    };
  }

  private async keysOf(issuer: OidcIssuerConfig): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const known = this.keySets.get(issuer.issuer);
    if (known) return known;
    const { oidc } = this.config;
    const jwksUri = issuer.jwksUri ?? (await discoveredJwksUri(issuer, oidc.fetchTimeoutMs));
    const keys = createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: oidc.fetchTimeoutMs,
      cooldownDuration: oidc.jwksCooldownMs,
      cacheMaxAge: oidc.jwksMaxAgeMs,
    });
    this.keySets.set(issuer.issuer, keys);
    return keys;
  }
}

function decoded(token: string): {
  header: ReturnType<typeof decodeProtectedHeader>;
  claims: JWTPayload;
} {
  try {
    return { header: decodeProtectedHeader(token), claims: decodeJwt(token) };
  } catch {
    throw new InvalidTokenError('The token is not a well-formed JWT.');
  }
}

async function discoveredJwksUri(issuer: OidcIssuerConfig, timeoutMs: number): Promise<string> {
  const response = await fetch(issuer.discoveryUrl, { signal: AbortSignal.timeout(timeoutMs) });
  const document = (await response.json()) as { jwks_uri?: unknown };
  if (typeof document.jwks_uri !== 'string') throw new Error('no jwks_uri');
  return document.jwks_uri;
}

/** The token's scope claim mapped onto the service's scopes, or the issuer's defaultScopes. */
function scopesOf(issuer: OidcIssuerConfig, payload: JWTPayload): Scope[] | null {
  const claim = issuer.claims.scope.map((name) => payload[name]).find((v) => v !== undefined);
  if (claim === undefined) return issuer.defaultScopes?.filter(isScope) ?? null;
  const values = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
  return values.filter((v): v is Scope => typeof v === 'string' && isScope(v));
}

/** What a jose error says failed, in words that never repeat the token. */
function failedCheck(error: errors.JOSEError): string {
  if (error instanceof errors.JWTExpired) return 'The token has expired (exp).';
  if (error instanceof errors.JWTClaimValidationFailed)
    return `The token's ${error.claim} claim check failed: ${error.reason}.`;
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return "The token's signature does not verify.";
  if (error instanceof errors.JWKSNoMatchingKey)
    return "No key of the token's issuer matches the token's kid.";
  if (error instanceof errors.JOSEAlgNotAllowed) return "The token's algorithm is not accepted.";
  return 'The token is not a valid signed JWT.';
}
