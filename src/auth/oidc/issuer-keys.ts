import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  type CryptoKey,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';
import { isTrustedUrl, type OidcIssuerConfig } from '../../config';
import { IdentityProviderUnavailableError } from '../auth.errors';

type RemoteKeys = ReturnType<typeof createRemoteJWKSet>;
type LocalKeys = ReturnType<typeof createLocalJWKSet>;

export interface IssuerKeysOptions {
  /** OIDC_FETCH_TIMEOUT_MS: how long one fetch of the discovery document or the JWKS may take. */
  fetchTimeoutMs: number;
  /**
   * OIDC_JWKS_COOLDOWN_MS: the least time between two JWKS fetches for an unknown `kid`, and
   * between two attempts while the issuer cannot be fetched.
   */
  cooldownMs: number;
  /** OIDC_JWKS_MAX_AGE_MS: how long a fetched JWKS is used before it is fetched again. */
  maxAgeMs: number;
}

/** Thrown instead of a fetch while the issuer's last fetch failed and its pause has not ended. */
class FetchPaused extends Error {}

/**
 * One issuer's signing keys: its discovery document, fetched once (a concurrent burst shares one
 * fetch; a failure is retried, not remembered), then its JWKS through jose's remote key set
 * (cached for OIDC_JWKS_MAX_AGE_MS, fetched again for an unknown `kid` at most once per
 * OIDC_JWKS_COOLDOWN_MS). When the issuer cannot be fetched, the last fetched JWKS keeps
 * verifying tokens whose key it holds, also past its max age; a token whose key it lacks gets
 * IdentityProviderUnavailableError. A failed fetch pauses fetching for a cooldown, so an issuer
 * that is down costs one attempt per cooldown, not one per request: Retry-After says when the
 * next attempt is.
 */
export class IssuerKeys {
  private jwksUri: Promise<string> | null = null;
  private remote: RemoteKeys | null = null;
  /** The last fetched JWKS as a local set (built once per fetched document). */
  private fallback: { jwks: JSONWebKeySet; keys: LocalKeys } | null = null;
  /** No fetch before this (ms since the epoch): set by a failed fetch. */
  private pausedUntil = 0;

  constructor(
    private readonly issuer: OidcIssuerConfig,
    private readonly options: IssuerKeysOptions,
  ) {}

  /** The key that verifies a token with this header, for jwtVerify. */
  readonly keyFor = async (
    header: JWSHeaderParameters,
    token: FlattenedJWSInput,
  ): Promise<CryptoKey> => {
    let remote: RemoteKeys;
    try {
      remote = await this.remoteKeys();
    } catch {
      throw this.unavailable();
    }
    try {
      return await remote(header, token);
    } catch (error) {
      // The token's own fault: no key of a JWKS fetched within the cooldown has its kid.
      if (isKeySelection(error) || !isFetchFailure(error)) throw error;
      if (!(error instanceof FetchPaused)) this.pause();
      const cached = this.lastFetched(remote);
      if (cached) {
        try {
          return await cached(header, token);
        } catch (fallbackError) {
          if (!(fallbackError instanceof errors.JWKSNoMatchingKey)) throw fallbackError;
        }
      }
      throw this.unavailable();
    }
  };

  private unavailable(): IdentityProviderUnavailableError {
    const seconds = Math.max(1, Math.ceil((this.pausedUntil - Date.now()) / 1000));
    return new IdentityProviderUnavailableError(this.issuer.issuer, seconds);
  }

  private pause(): void {
    this.pausedUntil = Date.now() + this.options.cooldownMs;
  }

  private async remoteKeys(): Promise<RemoteKeys> {
    if (this.remote) return this.remote;
    const uri = await this.discoveredJwksUri();
    this.remote ??= createRemoteJWKSet(new URL(uri), {
      timeoutDuration: this.options.fetchTimeoutMs,
      cooldownDuration: this.options.cooldownMs,
      cacheMaxAge: this.options.maxAgeMs,
      [customFetch]: this.pacedFetch,
    });
    return this.remote;
  }

  /** The JWKS address: configured, else from the discovery document (one fetch at a time). */
  private discoveredJwksUri(): Promise<string> {
    if (this.issuer.jwksUri !== null) return Promise.resolve(this.issuer.jwksUri);
    this.jwksUri ??= this.fetchDiscovery().catch((error: unknown) => {
      this.jwksUri = null;
      throw error;
    });
    return this.jwksUri;
  }

  private async fetchDiscovery(): Promise<string> {
    const response = await this.pacedFetch(this.issuer.discoveryUrl, {
      signal: AbortSignal.timeout(this.options.fetchTimeoutMs),
      headers: { accept: 'application/json' },
    });
    try {
      if (response.status !== 200) throw new Error(`discovery answered ${response.status}`);
      const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
      // OpenID Connect Discovery 1.0 §4.3: the document names the issuer it describes.
      if (document.issuer !== this.issuer.issuer) throw new Error('discovery names another issuer');
      if (typeof document.jwks_uri !== 'string' || !isTrustedUrl(document.jwks_uri))
        throw new Error('discovery has no usable jwks_uri');
      return document.jwks_uri;
    } catch (error) {
      this.pause();
      throw error;
    }
  }

  /** fetch, unless paused by a failure; a failure (or an answer other than 200) pauses. */
  private readonly pacedFetch = async (url: string, init: RequestInit): Promise<Response> => {
    if (Date.now() < this.pausedUntil) throw new FetchPaused();
    try {
      const response = await fetch(url, init);
      if (response.status !== 200) this.pause();
      return response;
    } catch (error) {
      this.pause();
      throw error;
    }
  };

  private lastFetched(remote: RemoteKeys): LocalKeys | null {
    const jwks = remote.jwks();
    if (!jwks) return null;
    if (this.fallback?.jwks !== jwks) this.fallback = { jwks, keys: createLocalJWKSet(jwks) };
    return this.fallback.keys;
  }
}

/**
 * What jose's remote set throws when fetching failed (a timeout, an answer other than 200 or not
 * a JWKS, a network error, a paused fetch) — not what a token's own header causes, which must
 * neither pause fetching nor fall back.
 */
function isFetchFailure(error: unknown): boolean {
  if (!(error instanceof errors.JOSEError)) return true;
  return (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    error.code === 'ERR_JOSE_GENERIC'
  );
}

/** A fetched JWKS that has no key, or several, for the token's header: not a fetch failure. */
function isKeySelection(error: unknown): boolean {
  return (
    error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys
  );
}
