import { createHash } from 'node:crypto';
import type { VerifiedToken } from './verified-token';

interface Entry {
  token: VerifiedToken;
  /** Used until this instant (ms): its `exp`, or `iat` + OIDC_MAX_TOKEN_AGE_S if sooner, plus the clock skew. */
  usableUntil: number;
}

/**
 * Tokens this instance verified, by the SHA-256 of the token (the token itself is not kept), so a
 * client that sends one token many times pays for its signature once. An entry is used only until
 * the instant verifying the token again would refuse it (its `exp`, or its maximum age, with the
 * clock skew), checked on every use: expiry stays exact. At most OIDC_TOKEN_CACHE_SIZE entries,
 * the least recently used dropped first; 0 turns the cache off. docs/authentication.md, "Access tokens: what is
 * checked", says what this means for revocation.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly size: number) {}

  static digest(token: string): string {
    return createHash('sha256').update(token).digest('base64url');
  }

  get(digest: string, now = Date.now()): VerifiedToken | null {
    const entry = this.entries.get(digest);
    if (!entry) return null;
    this.entries.delete(digest);
    if (now >= entry.usableUntil) return null;
    this.entries.set(digest, entry);
    return entry.token;
  }

  set(digest: string, token: VerifiedToken, usableUntil: number): void {
    if (this.size === 0) return;
    this.entries.delete(digest);
    this.entries.set(digest, { token, usableUntil });
    while (this.entries.size > this.size) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
