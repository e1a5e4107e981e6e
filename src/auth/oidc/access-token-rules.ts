import {
  errors,
  type JWTHeaderParameters,
  type JWTPayload,
  type ProtectedHeaderParameters,
} from 'jose';
import type { OidcIssuerConfig } from '../../config';
import { isScope, type Scope } from '../access-grant';
import { InvalidTokenError } from '../auth.errors';

/** The signature algorithms accepted: asymmetric only, never `none` or an HMAC. */
export const TOKEN_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

/** Header `typ`s of access tokens: RFC 9068's `at+jwt` (with or without `application/`), `JWT`. */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt', 'application/jwt']);

/** Claims only an ID token carries (OpenID Connect Core 1.0 §2, §3.1.3.6, §3.3.2.11). */
const ID_TOKEN_CLAIMS = ['nonce', 'at_hash', 'c_hash'];

/** The algorithm is checked before any key is looked for: `none` and HMACs never reach jose. */
export function checkAlgorithm(header: ProtectedHeaderParameters): void {
  if (typeof header.alg !== 'string' || !TOKEN_ALGORITHMS.includes(header.alg))
    throw new InvalidTokenError(
      `The token's algorithm (alg) is not accepted; accepted: ${TOKEN_ALGORITHMS.join(', ')}.`,
    );
}

/**
 * An access token, not an ID token (docs/authentication.md, "Access tokens: what is checked"): the header `typ`
 * is absent, `JWT` or `at+jwt`; the payload carries none of an ID token's own claims (`nonce`,
 * `at_hash`, `c_hash`); Keycloak's payload `typ` is absent or `Bearer` (its ID tokens say `ID`).
 * Checked after the signature, so a refusal says only what the issuer itself signed.
 */
export function checkAccessToken(header: JWTHeaderParameters, payload: JWTPayload): void {
  const typ: unknown = header.typ;
  if (typ !== undefined && (typeof typ !== 'string' || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase())))
    throw new InvalidTokenError(
      'The token is not an access token: its header typ is neither at+jwt nor JWT.',
    );
  const idClaim = ID_TOKEN_CLAIMS.find((claim) => payload[claim] !== undefined);
  if (idClaim !== undefined)
    throw new InvalidTokenError(
      `The token is an ID token (it carries ${idClaim}), not an access token.`,
    );
  if (payload.typ === 'ID')
    throw new InvalidTokenError('The token is an ID token (typ ID), not an access token.');
  if (payload.typ !== undefined && payload.typ !== 'Bearer')
    throw new InvalidTokenError('The token is not an access token: its typ claim is not Bearer.');
}

/**
 * jose checks a future `iat` only with a maximum age: without one, an `iat` later than now and
 * the clock skew is refused here.
 */
export function checkIssuedAt(payload: JWTPayload, clockSkewS: number, nowS: number): void {
  if (payload.iat === undefined) return;
  if (typeof payload.iat !== 'number' || !Number.isFinite(payload.iat))
    throw new InvalidTokenError("The token's iat claim is not a time.");
  if (payload.iat > nowS + clockSkewS)
    throw new InvalidTokenError("The token's iat claim is in the future.");
}

/**
 * The token's scope claim mapped onto the service's scopes: present (a space-separated string or
 * a list), exactly the service's scopes it names — other names are the issuer's own and ignored;
 * absent, the issuer's defaultScopes (null: every scope).
 */
export function scopesOf(issuer: OidcIssuerConfig, payload: JWTPayload): Scope[] | null {
  const claim = issuer.claims.scope.map((name) => payload[name]).find((v) => v !== undefined);
  if (claim === undefined) return issuer.defaultScopes?.filter(isScope) ?? null;
  const values = typeof claim === 'string' ? claim.split(/\s+/) : Array.isArray(claim) ? claim : [];
  return [...new Set(values.filter((v): v is Scope => typeof v === 'string' && isScope(v)))];
}

/** What a jose error says failed, in words that never repeat the token or a claim's value. */
export function failedCheck(error: errors.JOSEError): string {
  if (error instanceof errors.JWTExpired)
    return error.claim === 'iat'
      ? 'The token is older than OIDC_MAX_TOKEN_AGE_S allows (iat).'
      : 'The token has expired (exp).';
  if (error instanceof errors.JWTClaimValidationFailed) return claimCheck(error);
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return "The token's signature does not verify.";
  if (error instanceof errors.JWKSNoMatchingKey)
    return "No key of the token's issuer matches the token's kid.";
  if (error instanceof errors.JWKSMultipleMatchingKeys)
    return "Several keys of the token's issuer match the token's kid.";
  if (error instanceof errors.JOSEAlgNotAllowed)
    return "The token's algorithm (alg) is not accepted.";
  return 'The token is not a valid signed JWT.';
}

function claimCheck(error: errors.JWTClaimValidationFailed): string {
  const claim = ['iss', 'aud', 'exp', 'nbf', 'iat', 'sub'].includes(error.claim)
    ? error.claim
    : 'a';
  if (error.reason === 'missing') return `The token has no ${claim} claim.`;
  switch (claim) {
    case 'aud':
      return "The token's audience (aud) is not this service's.";
    case 'nbf':
      return 'The token is not valid yet (nbf).';
    case 'iat':
      return "The token's iat claim is in the future.";
    default:
      return `The token's ${claim} claim check failed.`;
  }
}
