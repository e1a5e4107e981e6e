import { Inject, Injectable } from '@nestjs/common';
import { LookupCache } from '../common/cache/lookup-cache';
import { APP_CONFIG, type AppConfig } from '../config';
import { identityIdOf } from './identity-id';
import { IdentityRepository, type Identity } from './identity.repository';

/**
 * How long and how many identities (and sub profiles of tokens) an instance remembers: at most
 * OIDC_TOKEN_CACHE_SIZE each, for OIDC_IDENTITY_CACHE_MS; none when the size is 0.
 */
export function identityCacheBounds(config: AppConfig): { ttlMs: number; max: number } {
  const max = config.oidc.tokenCacheSize;
  return { ttlMs: max === 0 ? 0 : config.oidc.identityCacheMs, max: Math.max(max, 1) };
}

/**
 * The stored identities with what this instance read of them lately (OIDC_IDENTITY_CACHE_MS):
 * which user an identity is. Changes made here (linking, unlinking, erasure) are forgotten at
 * once on this instance; other instances see them within the cache's bound.
 */
@Injectable()
export class IdentityDirectory {
  readonly cache: LookupCache<{ userSubject: string }>;

  constructor(
    readonly store: IdentityRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cache = new LookupCache({
      ...identityCacheBounds(config),
    });
  }

  idOf(issuer: string, subject: string): string {
    return identityIdOf(issuer, subject);
  }

  listOf(userSubject: string): Promise<Identity[]> {
    return this.store.listOf(userSubject);
  }

  /** Removes a user's identities but `keep` and forgets them here. */
  async removeOf(userSubject: string, keep: string[] = []): Promise<void> {
    const removed = await this.store.removeOf(userSubject, keep);
    const gone = new Set(removed);
    this.cache.forget((value, key) => gone.has(key) || value.userSubject === userSubject);
  }
}
