import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import { ProfileService } from '../profile';
import { IdentityDirectory } from './identity-directory';
import { IdentityTakenError, UnknownIssuerError } from './identity.errors';
import type { IdentityOrigin } from './identity.schema';

/** An identity of a user as the operator sees it. */
export interface LinkedIdentity {
  issuer: string;
  subject: string;
  createdAt: Date;
  how: IdentityOrigin;
}

/**
 * The operator's side of identities: which identities a user has, linking and unlinking them
 * (PUT /admin/users/{subject}/identities), and removing them with the user (erasure).
 */
@Injectable()
export class IdentityLinks {
  private readonly issuers: Set<string>;

  constructor(
    private readonly directory: IdentityDirectory,
    private readonly profiles: ProfileService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.issuers = new Set(config.oidc.issuers.map((issuer) => issuer.issuer));
  }

  async listOf(userSubject: string): Promise<LinkedIdentity[]> {
    const found = await this.directory.listOf(userSubject);
    return found.map(({ issuer, subject, createdAt, how }) => ({
      issuer,
      subject,
      createdAt,
      how,
    }));
  }

  /**
   * Makes `wanted` the user's identities: links the new ones, unlinks the others. Checked before
   * anything is written: the user exists (404), every issuer is configured (400), no identity
   * belongs to another user (409). An identity another user claims between the check and the
   * insert is refused the same way (the `_id` decides). Idempotent.
   */
  async replace(
    userSubject: string,
    wanted: { issuer: string; subject: string }[],
  ): Promise<LinkedIdentity[]> {
    await this.profiles.getRoot(userSubject);
    const unknown = wanted.find(({ issuer }) => !this.issuers.has(issuer));
    if (unknown) throw new UnknownIssuerError(unknown.issuer);
    const byId = new Map(wanted.map((w) => [this.directory.idOf(w.issuer, w.subject), w]));
    const ids = [...byId.keys()];
    const existing = await this.directory.store.findMany(ids);
    const taken = existing.find((identity) => identity.userSubject !== userSubject);
    if (taken) throw new IdentityTakenError(taken.issuer, taken.subject);
    const have = new Set(existing.map((identity) => identity.id));
    for (const [id, { issuer, subject }] of byId) {
      if (have.has(id)) continue;
      const claimed = await this.directory.store.claim({
        id,
        issuer,
        subject,
        userSubject,
        how: 'linked',
      });
      if (claimed && claimed.userSubject !== userSubject)
        throw new IdentityTakenError(issuer, subject);
    }
    await this.directory.removeOf(userSubject, ids);
    // The identities linked now may be cached here as unknown or as another user's until now.
    for (const id of ids) this.directory.cache.forgetKey(id);
    return this.listOf(userSubject);
  }

  /** Removes every identity of a user (an erasure's first step, repeated at its end). */
  async eraseOf(userSubject: string): Promise<void> {
    await this.directory.removeOf(userSubject);
  }
}
