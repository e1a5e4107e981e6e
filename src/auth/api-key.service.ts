import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import { ForbiddenError, UnauthenticatedError, ValidationFailedError } from '../common/errors';
import type { Tenant } from '../common/tenancy/namespace';
import { ApiKeyRepository, type ApiKeyRecord, type NewApiKey } from './api-key.repository';
import { digestApiKey, digestsEqual, generateApiKey } from './api-key.secret';
import { ApiKeyNotFoundError, ScopeEscalationError, SubProfileNotFoundError } from './auth.errors';
import { OverBudgetKeyLookups } from './over-budget-lookups';
import { branchOfNewKey, scopeOf, type KeyManager } from './key-scope';
import { escalationOf, FULL_GRANT, lifetimeEscalationOf, type AccessGrant } from './access-grant';
import { grantOfRequest, type GrantRequest } from './key-grant';
import { KeyLastUse } from './key-last-use';
import { publishableKeyOf, refuseAllowedOrigins, type PublishableBounds } from './publishable-key';
import { grantOf, keyExpiryOf, type Principal } from './principal';
import { SUB_PROFILE_LOOKUP, type SubProfileLookup } from './sub-profiles.port';

/** What a key-minting caller may give: its grant, and until when its own key lasts. */
export interface CallerLimits {
  grant: AccessGrant;
  /** The calling key's expiry; null: it never expires (a key without one, or a token). */
  expiresAt: Date | null;
}

const UNLIMITED_CALLER: CallerLimits = { grant: FULL_GRANT, expiresAt: null };

/** The limits of a caller minting or rotating keys. */
export function callerLimitsOf(principal: Principal): CallerLimits {
  return { grant: grantOf(principal), expiresAt: keyExpiryOf(principal) };
}

/** A principal before the request branch is applied, plus the branch its key is bound to. */
export type KeyIdentity =
  | { principal: Principal & { kind: 'operator' }; boundBranch: null }
  | { principal: Exclude<Principal, { kind: 'operator' }>; boundBranch: string | null };

export interface IssuedKey {
  key: ApiKeyRecord;
  apiKey: string;
}

export interface CreateKeyRequest extends GrantRequest {
  /** 'publishable': a read-only key for browser pages (publishable-key.ts); absent: root or sub. */
  kind?: 'publishable';
  /** A publishable key's browser origins. */
  allowedOrigins?: readonly string[] | null;
  name?: string;
  clientId?: string;
  accountId?: string;
  branch?: string;
  expiresAt?: Date;
}

/**
 * The fields of a team key's request (POST /teams/{id}/api-keys): a team key, or with `"kind":
 * "publishable"` a publishable key reading the team's collections.
 */
export type CreateTeamKeyRequest = Pick<
  CreateKeyRequest,
  | 'kind'
  | 'allowedOrigins'
  | 'name'
  | 'branch'
  | 'expiresAt'
  | 'scopes'
  | 'collections'
  | 'allowedIps'
>;

/** POST …/rotate: how long the old secret keeps working (s); 0 when absent. */
export interface RotateKeyRequest {
  graceSeconds?: number;
}

/** A rotated key: the new one with its secret, and when the old one stops working. */
export interface RotatedKey extends IssuedKey {
  previousExpiresAt: Date;
}

@Injectable()
export class ApiKeyService {
  /** Digest of ADMIN_API_KEY, computed once. */
  private readonly adminDigest: string | null;
  private readonly bounds: PublishableBounds;

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly overBudget: OverBudgetKeyLookups,
    private readonly lastUse: KeyLastUse,
    @Inject(SUB_PROFILE_LOOKUP) private readonly profiles: SubProfileLookup,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.adminDigest = config.adminApiKey ? digestApiKey(config.adminApiKey) : null;
    this.bounds = config.apiKeys;
  }

  /**
   * Resolves the SHA-256 digest of a presented key to who it acts as: the operator key by a
   * constant-time comparison, customer keys from this instance's cache or by one indexed lookup.
   */
  authenticate(digest: string, now = new Date()): Promise<KeyIdentity> {
    return this.identify(digest, (d) => this.keys.findByDigest(d), now);
  }

  /**
   * The same answer for a client address over its failed-authentication budget, at a bounded
   * database cost: the operator key and cached keys as always, any other key in the address's
   * paced lookup (OverBudgetKeyLookups), which may wait up to AUTH_FAILURE_LOOKUP_INTERVAL_MS.
   */
  authenticateOverBudget(address: string, digest: string, now = new Date()): Promise<KeyIdentity> {
    return this.identify(digest, (d) => this.overBudget.find(address, d), now);
  }

  private async identify(
    digest: string,
    find: (digest: string) => Promise<ApiKeyRecord | null>,
    now: Date,
  ): Promise<KeyIdentity> {
    if (this.adminDigest && digestsEqual(digest, this.adminDigest)) {
      return { principal: { kind: 'operator', branch: '' }, boundBranch: null };
    }
    const key = await find(digest);
    if (!key) throw new UnauthenticatedError('The API key is unknown or was revoked.');
    if (key.expiresAt && key.expiresAt <= now)
      throw new UnauthenticatedError('The API key has expired.');
    // Synchronous: the write, when one is due, goes off the request's path.
    this.lastUse.seen(key.id, now);
    return { principal: principalOf(key), boundBranch: key.branch };
  }

  issueRootKey(subject: string, name = 'default'): Promise<IssuedKey> {
    return this.issue({ kind: 'root', subject, name });
  }

  issueTeamKey(teamId: string, name = 'default'): Promise<IssuedKey> {
    return this.issue({ kind: 'team', teamId, name });
  }

  /**
   * A further key of a team (an admin member asks): optionally named, bound to a branch and
   * expiring, like a root key from POST /api-keys; with `"kind": "publishable"` a publishable
   * key of the team (its tenant is the team), checked as a user's.
   */
  async createForTeam(
    teamId: string,
    request: CreateTeamKeyRequest,
    caller: CallerLimits,
  ): Promise<IssuedKey> {
    refusePastExpiry(request.expiresAt);
    if (request.kind === 'publishable')
      return this.issuePublishable({ teamId }, request.branch ?? null, request, caller);
    refuseAllowedOrigins(request);
    const grant = this.grantWithin(request, caller);
    return this.issue({
      kind: 'team',
      teamId,
      name: request.name ?? '',
      branch: request.branch ?? null,
      expiresAt: request.expiresAt ?? null,
      grant,
    });
  }

  /** Rotates a team key (an admin member asks), as rotate does a user's key. */
  async rotateForTeam(
    teamId: string,
    id: string,
    request: RotateKeyRequest,
    caller: CallerLimits,
  ): Promise<RotatedKey> {
    const key = await this.keys.findForTeam(teamId, id);
    if (!key) throw new ApiKeyNotFoundError(id);
    return this.replace(key, request, caller);
  }

  /** The team's keys: its team keys and its publishable keys. */
  listForTeam(teamId: string): Promise<ApiKeyRecord[]> {
    return this.keys.listForTeam(teamId);
  }

  async revokeForTeam(teamId: string, id: string): Promise<void> {
    if (!(await this.keys.deleteForTeam(teamId, id))) throw new ApiKeyNotFoundError(id);
  }

  /**
   * POST /api-keys: a root key, or with clientId + accountId a sub key acting as that existing
   * sub profile (bound to the profile's branch). A manager bound to a branch mints only keys
   * bound to it, and sub keys only for sub profiles in it.
   */
  async createForRoot(
    manager: KeyManager,
    requestBranch: string,
    request: CreateKeyRequest,
    caller: CallerLimits = UNLIMITED_CALLER,
  ): Promise<IssuedKey> {
    const { subject } = manager;
    refusePastExpiry(request.expiresAt);
    if (request.kind === 'publishable')
      return this.issuePublishable(
        { subject },
        branchOfNewKey(manager, request.branch, null),
        request,
        caller,
      );
    refuseAllowedOrigins(request);
    const grant = this.grantWithin(request, caller);
    const hasClient = request.clientId !== undefined;
    const hasAccount = request.accountId !== undefined;
    if (hasClient !== hasAccount) {
      throw new ValidationFailedError([
        {
          field: hasClient ? 'accountId' : 'clientId',
          message: 'clientId and accountId must be given together',
        },
      ]);
    }
    const base = { name: request.name ?? '', expiresAt: request.expiresAt ?? null, grant };
    if (!hasClient) {
      const branch = branchOfNewKey(manager, request.branch, null);
      return this.issue({ ...base, kind: 'root', subject, branch });
    }
    const branch = branchOfNewKey(manager, request.branch, requestBranch);
    const clientId = request.clientId ?? '';
    const accountId = request.accountId ?? '';
    const profile = await this.profiles.findSub({ subject, branch, clientId, accountId });
    if (!profile) throw new SubProfileNotFoundError(clientId, accountId, branch);
    return this.issue({
      ...base,
      kind: 'sub',
      subject,
      clientId: profile.clientId,
      accountId: profile.accountId,
      profileId: profile.id,
      branch,
    });
  }

  /** The key a request authenticated with (its record, digest included: callers pick what to show). */
  findById(id: string): Promise<ApiKeyRecord | null> {
    return this.keys.findById(id);
  }

  /** Revokes every key acting as a sub profile (the profile is being deleted). */
  async revokeForSubProfile(subject: string, profileId: string): Promise<void> {
    await this.keys.deleteForProfile(subject, profileId);
  }

  /** Revokes every key of a user (root and sub keys, every branch) or of a team: an erasure. */
  async revokeAllOf(tenant: Tenant): Promise<void> {
    await this.keys.deleteAllOf(tenant);
  }

  /** The user's keys; for a manager bound to a branch only the keys bound to that branch. */
  list(manager: KeyManager): Promise<ApiKeyRecord[]> {
    return this.keys.listInScope(scopeOf(manager));
  }

  /**
   * Revokes a key of the user; a manager bound to a branch only keys bound to that branch (403
   * for the user's other keys: they exist, the caller just may not touch them).
   */
  async revoke(manager: KeyManager, id: string): Promise<void> {
    if (await this.keys.deleteInScope(scopeOf(manager), id)) return;
    if (manager.boundBranch !== null && (await this.keys.existsForSubject(manager.subject, id))) {
      throw new ForbiddenError(
        `The API key is bound to branch '${manager.boundBranch}' and may only revoke keys bound to it.`,
      );
    }
    throw new ApiKeyNotFoundError(id);
  }

  /**
   * POST /api-keys/{id}/rotate: a new secret for a key the manager may revoke, with the same
   * kind, rights, name, branch and expiry; the old secret keeps working for `graceSeconds` (never
   * longer than it would have), then fails 401. A key rotates only keys whose rights it has
   * itself (else it would get a secret with more: 403 SCOPE_ESCALATION).
   */
  async rotate(
    manager: KeyManager,
    id: string,
    request: RotateKeyRequest,
    caller: CallerLimits = UNLIMITED_CALLER,
  ): Promise<RotatedKey> {
    const key = await this.keys.findInScope(scopeOf(manager), id);
    if (key) return this.replace(key, request, caller);
    if (manager.boundBranch !== null && (await this.keys.existsForSubject(manager.subject, id))) {
      throw new ForbiddenError(
        `The API key is bound to branch '${manager.boundBranch}' and may only rotate keys bound to it.`,
      );
    }
    throw new ApiKeyNotFoundError(id);
  }

  /**
   * The new key first, then the old one's expiry: if the second step fails, both secrets keep
   * working (the caller retries the rotation or revokes the old key) and none is lost.
   */
  private async replace(
    key: ApiKeyRecord,
    request: RotateKeyRequest,
    caller: CallerLimits,
  ): Promise<RotatedKey> {
    const beyond =
      escalationOf(key.grant, caller.grant) ??
      lifetimeEscalationOf(key.expiresAt, caller.expiresAt);
    if (beyond !== null) throw new ScopeEscalationError(beyond);
    const now = Date.now();
    if (key.expiresAt && key.expiresAt.getTime() <= now) throw new ApiKeyNotFoundError(key.id);
    const issued = await this.issue({
      kind: key.kind,
      name: key.name,
      subject: key.subject,
      teamId: key.teamId,
      clientId: key.clientId,
      accountId: key.accountId,
      profileId: key.profileId,
      branch: key.branch,
      expiresAt: key.expiresAt,
      grant: key.grant,
      allowedOrigins: key.allowedOrigins,
    });
    const graceEnd = new Date(now + (request.graceSeconds ?? 0) * 1000);
    const until = key.expiresAt && key.expiresAt < graceEnd ? key.expiresAt : graceEnd;
    if (!(await this.keys.expireBy(key.id, until))) {
      // Revoked meanwhile: its successor must not outlive it.
      await this.keys.deleteById(issued.key.id);
      throw new ApiKeyNotFoundError(key.id);
    }
    return { ...issued, previousExpiresAt: until };
  }

  /**
   * A publishable key of a user (`subject`) or of a team (`teamId`): its collections and origins
   * checked (publishable-key.ts), its grant within the calling key's.
   */
  private issuePublishable(
    owner: { subject: string } | { teamId: string },
    branch: string | null,
    request: CreateKeyRequest,
    caller: CallerLimits,
  ): Promise<IssuedKey> {
    const publishable = publishableKeyOf(request, this.bounds);
    const grant = this.grantWithin({ ...publishable.grant, expiresAt: request.expiresAt }, caller);
    return this.issue({
      kind: 'publishable',
      ...owner,
      name: request.name ?? '',
      expiresAt: request.expiresAt ?? null,
      branch,
      grant,
      allowedOrigins: publishable.allowedOrigins,
    });
  }

  /**
   * The grant a request asks for, checked and within what the calling key has, and its expiry
   * no later than the calling key's.
   */
  private grantWithin(
    request: GrantRequest & { expiresAt?: Date },
    caller: CallerLimits,
  ): AccessGrant {
    const grant = grantOfRequest(request, this.bounds);
    const beyond =
      escalationOf(grant, caller.grant) ??
      lifetimeEscalationOf(request.expiresAt ?? null, caller.expiresAt);
    if (beyond !== null) throw new ScopeEscalationError(beyond);
    return grant;
  }

  private async issue(fields: Partial<NewApiKey> & Pick<NewApiKey, 'kind'>): Promise<IssuedKey> {
    const generated = generateApiKey();
    const key = await this.keys.insert({
      name: '',
      subject: '',
      teamId: '',
      clientId: '',
      accountId: '',
      profileId: '',
      branch: null,
      expiresAt: null,
      ...fields,
      digest: generated.digest,
      prefix: generated.prefix,
    });
    return { key, apiKey: generated.secret };
  }
}

function refusePastExpiry(expiresAt: Date | undefined): void {
  if (expiresAt && expiresAt.getTime() <= Date.now()) {
    throw new ValidationFailedError([
      { field: 'expiresAt', message: 'expiresAt must be in the future' },
    ]);
  }
}

function principalOf(key: ApiKeyRecord): Exclude<Principal, { kind: 'operator' }> {
  // Keys without limits carry none: a principal without a grant may do everything its kind may.
  const common = {
    credential: { kind: 'key', keyId: key.id, expiresAt: key.expiresAt } as const,
    branch: key.branch ?? '',
    boundBranch: key.branch,
    ...(key.grant === FULL_GRANT ? {} : { grant: key.grant }),
  };
  switch (key.kind) {
    case 'root':
      return { kind: 'root', subject: key.subject, ...common };
    case 'sub':
      return {
        kind: 'sub',
        subject: key.subject,
        clientId: key.clientId,
        accountId: key.accountId,
        profileId: key.profileId,
        ...common,
      };
    case 'team':
      return { kind: 'team', teamId: key.teamId, ...common };
    case 'publishable':
      return {
        kind: 'publishable',
        tenant: key.teamId ? { kind: 'team', id: key.teamId } : { kind: 'user', id: key.subject },
        allowedOrigins: key.allowedOrigins ?? [],
        ...common,
      };
  }
}
