import { Inject, Injectable } from '@nestjs/common';
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import {
  APP_CONFIG,
  ConfigValidationError,
  unknownDefaultScopes,
  type AppConfig,
  type OidcIssuerConfig,
} from '../../config';
import { SCOPES } from '../access-grant';
import { InvalidTokenError } from '../auth.errors';
import {
  checkAccessToken,
  checkAlgorithm,
  checkIssuedAt,
  failedCheck,
  scopesOf,
  TOKEN_ALGORITHMS,
} from './access-token-rules';
import { IssuerKeys } from './issuer-keys';
import type { VerifiedToken } from './verified-token';
import { VerifiedTokenCache } from './verified-token-cache';

export { TOKEN_ALGORITHMS } from './access-token-rules';

/**
 * Verifies access tokens of the issuers of OIDC_ISSUERS (docs/authentication.md, "Access tokens: what is
 * checked"): the algorithm, the issuer, the signature with the issuer's keys (IssuerKeys), the
 * audience, `exp`/`nbf`/`iat` with OIDC_CLOCK_SKEW_S, the age with OIDC_MAX_TOKEN_AGE_S, that it
 * is an access token and not an ID token, and the subject; then its scopes. A token verified
 * before is found by digest (VerifiedTokenCache). Disabled — no token accepted, every bearer
 * credential read as an API key — without issuers. Refuses to start when a defaultScopes names
 * a scope the service does not have.
 */
@Injectable()
export class TokenVerifier {
  readonly enabled: boolean;
  private readonly issuers: Map<string, { config: OidcIssuerConfig; keys: IssuerKeys }>;
  private readonly cache: VerifiedTokenCache;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const { oidc } = config;
    const problems = unknownDefaultScopes(oidc.issuers, SCOPES);
    if (problems.length > 0) throw new ConfigValidationError(problems);
    const keyOptions = {
      fetchTimeoutMs: oidc.fetchTimeoutMs,
      cooldownMs: oidc.jwksCooldownMs,
      maxAgeMs: oidc.jwksMaxAgeMs,
    };
    this.issuers = new Map(
      oidc.issuers.map((issuer) => [
        issuer.issuer,
        { config: issuer, keys: new IssuerKeys(issuer, keyOptions) },
      ]),
    );
    this.enabled = this.issuers.size > 0;
    this.cache = new VerifiedTokenCache(oidc.tokenCacheSize);
  }

  async verify(token: string): Promise<VerifiedToken> {
    const digest = VerifiedTokenCache.digest(token);
    const cached = this.cache.get(digest);
    if (cached) return cached;
    const { header, claims } = decoded(token);
    checkAlgorithm(header);
    const issuer = typeof claims.iss === 'string' ? this.issuers.get(claims.iss) : undefined;
    if (!issuer) throw new InvalidTokenError("The token's issuer (iss) is not a trusted issuer.");
    const { oidc } = this.config;
    let verified: Awaited<ReturnType<typeof jwtVerify>>;
    try {
      verified = await jwtVerify(token, issuer.keys.keyFor, {
        issuer: issuer.config.issuer,
        audience: issuer.config.audiences,
        algorithms: TOKEN_ALGORITHMS,
        clockTolerance: oidc.clockSkewS,
        requiredClaims: ['exp'],
        ...(oidc.maxTokenAgeS !== null ? { maxTokenAge: oidc.maxTokenAgeS } : {}),
      });
    } catch (error) {
      if (error instanceof errors.JOSEError) throw new InvalidTokenError(failedCheck(error));
      throw error;
    }
    const { payload, protectedHeader } = verified;
    checkIssuedAt(payload, oidc.clockSkewS, Date.now() / 1000);
    checkAccessToken(protectedHeader, payload);
    const result = claimsOf(issuer.config, payload);
    this.cache.set(digest, result, this.usableUntil(payload));
    return result;
  }

  /** When verifying the token again would refuse it: its exp, or its maximum age, with the skew. */
  private usableUntil(payload: JWTPayload): number {
    const { clockSkewS, maxTokenAgeS } = this.config.oidc;
    let until = payload.exp ?? 0;
    if (maxTokenAgeS !== null && payload.iat !== undefined)
      until = Math.min(until, payload.iat + maxTokenAgeS);
    return (until + clockSkewS) * 1000;
  }
}

function claimsOf(issuer: OidcIssuerConfig, payload: JWTPayload): VerifiedToken {
  const { claims } = issuer;
  const subject = payload[claims.subject];
  if (typeof subject !== 'string' || subject.length === 0)
    throw new InvalidTokenError(`The token has no subject claim (${claims.subject}).`);
  // RFC 9068 access tokens name their client (client_id); the plain JWT access tokens of the
  // providers people use do too (azp). An ID token does not: its client is its aud.
  const client = claims.client.map((name) => payload[name]).find((v) => typeof v === 'string');
  if (typeof client !== 'string' || client.length === 0)
    throw new InvalidTokenError(
      `The token names no client (${claims.client.join(', ')}): an access token names the client it was issued to, an ID token does not.`,
    );
  const accountId = payload[claims.accountId];
  const email = payload[claims.email];
  return {
    issuer,
    subject,
    clientId: client,
    accountId: typeof accountId === 'string' ? accountId : subject,
    email: typeof email === 'string' ? email : null,
    scopes: scopesOf(issuer, payload),
    expiresAt: new Date((payload.exp ?? 0) * 1000),
  };
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
