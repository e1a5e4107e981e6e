import { Inject, Injectable } from '@nestjs/common';
import { isEmail } from 'class-validator';
import { randomUUID } from 'node:crypto';
import type { CustomerPrincipal } from '../auth';
import { UnknownIdentityError } from '../auth/auth.errors';
import type { Credential } from '../auth/principal';
import type { VerifiedToken } from '../auth/oidc/verified-token';
import type { TokenPrincipals } from '../auth/token-principals.port';
import { LookupCache } from '../common/cache/lookup-cache';
import { APP_CONFIG, type AppConfig } from '../config';
import { TenantPlacements } from '../placement';
import { ProfileExistsError, ProfileService } from '../profile';
import { IdentityDirectory, identityCacheBounds } from './identity-directory';
import { IdentityEmailTakenError, TokenProfileNotFoundError } from './identity.errors';
import type { Identity } from './identity.repository';

/** The email of a provisioned user whose token carries none (the `.invalid` TLD never resolves). */
export function placeholderEmailOf(identityId: string): string {
  return `${identityId}@identities.invalid`;
}

/** The token's email claim when it is an email address (at most 254 characters), else null. */
function emailOf(token: VerifiedToken): string | null {
  const { email } = token;
  return email !== null && email.length <= 254 && isEmail(email) ? email : null;
}

/**
 * Resolves verified access tokens to the profiles of their identities (docs/keys.md, "Authentication").
 * Which user an identity is and which sub profile a client acts as are cached per instance for
 * OIDC_IDENTITY_CACHE_MS, so a cached token request costs no database command.
 */
@Injectable()
export class TokenIdentities implements TokenPrincipals {
  private readonly subProfiles: LookupCache<{ profileId: string }>;

  constructor(
    private readonly directory: IdentityDirectory,
    private readonly profiles: ProfileService,
    private readonly placements: TenantPlacements,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.subProfiles = new LookupCache({
      ...identityCacheBounds(config),
    });
  }

  async principalOf(token: VerifiedToken, branch: string): Promise<CustomerPrincipal> {
    const { issuer } = token;
    const isRoot = issuer.rootClients.includes(token.clientId);
    const identityId = this.directory.idOf(issuer.issuer, token.subject);
    const user = await this.directory.cache.load(identityId, () => this.userOf(token, identityId));
    if (!user) throw new UnknownIdentityError(issuer.issuer, token.subject);
    const credential: Credential = {
      kind: 'token',
      issuer: issuer.issuer,
      subject: token.subject,
      identityId,
      expiresAt: token.expiresAt,
    };
    const subject = user.userSubject;
    if (isRoot) return { kind: 'root', credential, subject, branch, boundBranch: null };
    const key = { subject, branch, clientId: token.clientId, accountId: token.accountId };
    const cacheKey = [key.subject, key.branch, key.clientId, key.accountId].join('\n');
    const sub = await this.subProfiles.load(cacheKey, () =>
      this.subProfileOf(token, key, credential),
    );
    if (!sub) throw new TokenProfileNotFoundError(key.clientId, key.accountId, branch);
    return { kind: 'sub', credential, ...key, profileId: sub.profileId, boundBranch: null };
  }

  /** Of these identity ids, those still stored: one command, no cache (open streams). */
  existingAmong(identityIds: string[]): Promise<string[]> {
    return this.directory.store.existingAmong(identityIds);
  }

  /**
   * The user an identity is; an unknown identity is provisioned when its issuer allows (null:
   * it does not). Concurrent first requests, on any instance, insert the same `_id`: the first
   * insert's user wins and every request completes that user, so one user is made.
   */
  private async userOf(
    token: VerifiedToken,
    identityId: string,
  ): Promise<{ userSubject: string } | null> {
    let identity = await this.directory.store.find(identityId);
    if (!identity) {
      if (!token.issuer.provision) return null;
      identity = await this.directory.store.claim({
        id: identityId,
        issuer: token.issuer.issuer,
        subject: token.subject,
        userSubject: randomUUID(),
        how: 'provisioned',
      });
      // Claimed and removed at once (an erasure, an unlink): the next request starts over.
      if (!identity) throw new UnknownIdentityError(token.issuer.issuer, token.subject);
    }
    if (!identity.settled) await this.settle(identity, token);
    return { userSubject: identity.userSubject };
  }

  /**
   * Completes a provisioned identity's user: registration, placement, root profile, in that
   * order and each idempotent, so a request after a crash between two steps completes the rest.
   */
  private async settle(identity: Identity, token: VerifiedToken): Promise<void> {
    const email = emailOf(token) ?? placeholderEmailOf(identity.id);
    const subject = identity.userSubject;
    if ((await this.profiles.ensureUser(subject, email)) === 'email-taken') {
      await this.directory.store.release(identity.id, subject);
      throw new IdentityEmailTakenError(email.trim().toLowerCase());
    }
    const cluster = await this.placements.choose();
    await this.placements.place({ kind: 'user', id: subject }, cluster);
    await this.profiles.ensureRoot(subject, email);
    await this.directory.store.markSettled(identity.id);
  }

  /** The sub profile a client acts as, created on first use when the issuer provisions. */
  private async subProfileOf(
    token: VerifiedToken,
    key: { subject: string; branch: string; clientId: string; accountId: string },
    credential: Credential,
  ): Promise<{ profileId: string } | null> {
    const found = await this.profiles.findSub(key);
    if (found) return { profileId: found.id };
    if (!token.issuer.provision) return null;
    try {
      const created = await this.profiles.createSubProfile(
        { kind: 'root', credential, subject: key.subject, branch: key.branch, boundBranch: null },
        { clientId: key.clientId, accountId: key.accountId, email: emailOf(token) ?? '' },
      );
      return { profileId: created.id };
    } catch (error) {
      // A concurrent first request created it: that one is the profile.
      if (!(error instanceof ProfileExistsError)) throw error;
      const winner = await this.profiles.findSub(key);
      return winner ? { profileId: winner.id } : null;
    }
  }
}
