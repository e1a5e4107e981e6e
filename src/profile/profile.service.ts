import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth';
import {
  DomainError,
  ForbiddenError,
  ValidationFailedError,
  type FieldError,
} from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config';
import { ADMIN_SUBJECT_GROUP, MAX_GROUPS } from './profile.constants';
import { KeyedLock } from './keyed-lock';
import { mergePatch, type DottedUpdate } from './merge-patch';
import { serializedSize } from './profile-json';
import { ProfileRepository, rootKey, type ProfileKey } from './profile.repository';
import type {
  NewSubProfile,
  Plan,
  Profile,
  ProfileTarget,
  ProfileUpdate,
  SettingsValue,
} from './profile.types';

/** The callers of /profile; team and operator keys are refused by the guard. */
export type ProfilePrincipal = Extract<Principal, { kind: 'root' | 'sub' }>;
type RootPrincipal = Extract<Principal, { kind: 'root' }>;

/** Guarded writes retry after a concurrent change; this many attempts, then 409. */
const WRITE_ATTEMPTS = 5;

function ownKey(principal: ProfilePrincipal): ProfileKey {
  return principal.kind === 'root'
    ? rootKey(principal.subject)
    : {
        subject: principal.subject,
        branch: principal.branch,
        clientId: principal.clientId,
        accountId: principal.accountId,
      };
}

function sameKey(a: ProfileKey, b: ProfileKey): boolean {
  return (
    a.subject === b.subject &&
    a.branch === b.branch &&
    a.clientId === b.clientId &&
    a.accountId === b.accountId
  );
}

function describeKey(key: ProfileKey): string {
  return key.clientId === '' && key.accountId === ''
    ? `root profile of subject ${key.subject}`
    : `sub profile with clientId ${key.clientId} and accountId ${key.accountId} in branch '${key.branch}'`;
}

function notFound(key: ProfileKey): DomainError {
  return new DomainError('PROFILE_NOT_FOUND', `There is no ${describeKey(key)}.`);
}

function lockKey(key: ProfileKey): string {
  return JSON.stringify([key.subject, key.branch, key.clientId, key.accountId]);
}

const ONLY_OWN_PROFILE = 'A sub profile key may act only on its own profile.';

/**
 * Concurrency: on MongoDB every write below is one atomic query, and PUT /profile's
 * read-merge-write is guarded by the revision it read. FerretDB (the embedded development and test
 * database) rewrites whole documents without re-checking the filter, so there concurrent updates
 * of one document, even two $inc, lose each other. Writes to one profile are therefore also
 * queued in-process (`writes`), which makes a single instance correct on FerretDB too; several
 * instances need MongoDB, where the guard and the atomic operators suffice.
 */
@Injectable()
export class ProfileService {
  private readonly writes = new KeyedLock();

  constructor(
    private readonly profiles: ProfileRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Registers a user and creates its root profile (operator API). The user registry's unique
   * indexes decide duplicates; without transactions, a failed profile insert removes the user again.
   */
  async createUser(email: string, subject: string = randomUUID()): Promise<Profile> {
    const normalizedEmail = email.trim().toLowerCase();
    if (!(await this.profiles.insertUser(subject, normalizedEmail))) {
      throw new DomainError('DUPLICATE_USER', 'A user with this subject or email exists already.');
    }
    try {
      const profile = await this.profiles.insert(rootKey(subject), { email: normalizedEmail });
      if (!profile)
        throw new DomainError(
          'DUPLICATE_USER',
          `A root profile for subject ${subject} exists already.`,
        );
      return profile;
    } catch (error) {
      await this.profiles.deleteUser(subject);
      throw error;
    }
  }

  async getRoot(subject: string): Promise<Profile> {
    const profile = await this.profiles.findByKey(rootKey(subject));
    if (!profile) throw new DomainError('PROFILE_NOT_FOUND', `No user with subject ${subject}.`);
    return profile;
  }

  /** The sub profile with this key, or null. */
  async findSub(key: ProfileKey): Promise<Profile | null> {
    return this.profiles.findByKey(key);
  }

  async setPlans(subject: string, plans: Plan[]): Promise<Profile> {
    const key = rootKey(subject);
    const profile = await this.writes.run(lockKey(key), () => this.profiles.setPlans(key, plans));
    if (!profile) throw new DomainError('PROFILE_NOT_FOUND', `No user with subject ${subject}.`);
    return profile;
  }

  /** GET /profile: the caller's own profile, or the targeted one (root callers). */
  async getProfile(principal: ProfilePrincipal, target: ProfileTarget): Promise<Profile> {
    const key = this.targetKey(principal, target);
    if (principal.kind === 'sub' && !sameKey(key, ownKey(principal))) {
      throw new ForbiddenError(ONLY_OWN_PROFILE);
    }
    return this.findOrThrow(key);
  }

  /**
   * GET /profile/{accountId}: a sub profile of the caller's subject in the request branch. Without
   * clientId the accountId must be unique among them (else 400). A sub caller may read only itself.
   */
  async getSubProfile(
    principal: ProfilePrincipal,
    accountId: string,
    clientId: string | undefined,
  ): Promise<Profile> {
    if (principal.kind === 'sub') {
      const isSelf =
        accountId === principal.accountId &&
        (clientId === undefined || clientId === principal.clientId);
      if (!isSelf) throw new ForbiddenError(ONLY_OWN_PROFILE);
      return this.findOrThrow(ownKey(principal));
    }
    const { subject, branch } = principal;
    if (clientId !== undefined) return this.findOrThrow({ subject, branch, clientId, accountId });
    const found = await this.profiles.findByAccount(subject, branch, accountId, 2);
    if (found.length > 1) {
      throw new DomainError(
        'AMBIGUOUS_TARGET',
        `accountId ${accountId} exists under more than one clientId in branch '${branch}'; add ?clientId=.`,
      );
    }
    const [profile] = found;
    if (!profile) throw notFound({ subject, branch, clientId: '', accountId });
    return profile;
  }

  /**
   * POST /profile: a new sub profile in the request branch. The unique index decides a duplicate
   * (insert, then look up the winner for the 409), so concurrent requests create one profile.
   */
  async createSubProfile(principal: RootPrincipal, input: NewSubProfile): Promise<Profile> {
    const key: ProfileKey = {
      subject: principal.subject,
      branch: principal.branch,
      clientId: input.clientId,
      accountId: input.accountId,
    };
    const settings: Record<string, SettingsValue> =
      input.userMetadata === undefined ? {} : { userMetadata: input.userMetadata };
    this.assertWithinSize({ userMetadata: settings });
    const created = await this.profiles.insert(key, {
      email: input.email.trim().toLowerCase(),
      groups: [...new Set(input.groups ?? [])],
      settings,
    });
    if (created) return created;
    const existing = await this.profiles.findByKey(key);
    if (!existing) {
      throw new DomainError(
        'CONFLICT',
        `The ${describeKey(key)} was created and removed concurrently.`,
      );
    }
    throw new DomainError(
      'PROFILE_EXISTS',
      `The ${describeKey(key)} exists already: ${existing.id}.`,
      undefined,
      { existingId: existing.id },
    );
  }

  /**
   * PUT /profile. Merging needs the current value (to know what an object patch merges into and
   * to check the size of the result), so this reads, merges, checks, and writes with a filter on
   * the revision it read: a concurrent write makes the filter miss and the merge is redone on the
   * fresh profile, so no update is lost and no result can exceed the limits. The write itself is
   * one findOneAndUpdate with dotted $set/$unset paths.
   */
  async updateProfile(
    principal: ProfilePrincipal,
    target: ProfileTarget,
    update: ProfileUpdate,
  ): Promise<Profile> {
    const key = this.targetKey(principal, target);
    if (principal.kind === 'sub') {
      if (!sameKey(key, ownKey(principal))) throw new ForbiddenError(ONLY_OWN_PROFILE);
      if (update.metadata !== undefined) {
        throw new ForbiddenError('metadata can be changed only with a root key.');
      }
    }
    return this.writes.run(lockKey(key), () => this.mergeIntoProfile(key, update));
  }

  private async mergeIntoProfile(key: ProfileKey, update: ProfileUpdate): Promise<Profile> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const snapshot = await this.profiles.findSnapshot(key);
      if (!snapshot) throw notFound(key);
      const write = this.planUpdate(snapshot.profile, update);
      if (!write) return snapshot.profile;
      const updated = await this.profiles.updateIfUnchanged(key, snapshot.revision, write);
      if (updated) return updated;
    }
    throw new DomainError('CONFLICT', 'The profile kept changing concurrently; retry the request.');
  }

  /**
   * PUT/DELETE /profile/groups. Root callers, and sub callers whose own profile (read now, not
   * from the key) holds admin:subject. Each change is one atomic query; when it changes nothing
   * a read tells a no-op (200) from a missing profile (404) or a full group list (409).
   */
  async changeGroup(
    principal: ProfilePrincipal,
    target: ProfileTarget,
    group: string,
    change: 'add' | 'remove',
  ): Promise<Profile> {
    const key = this.targetKey(principal, target);
    if (principal.kind === 'sub') {
      const own = await this.profiles.findByKey(ownKey(principal));
      if (!own?.groups.includes(ADMIN_SUBJECT_GROUP)) {
        throw new ForbiddenError(
          `Groups can be changed with a root key, or a sub key whose profile holds the group '${ADMIN_SUBJECT_GROUP}'.`,
        );
      }
    }
    return this.writes.run(lockKey(key), () => this.applyGroupChange(key, group, change));
  }

  private async applyGroupChange(
    key: ProfileKey,
    group: string,
    change: 'add' | 'remove',
  ): Promise<Profile> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const changed =
        change === 'add'
          ? await this.profiles.addGroup(key, group, MAX_GROUPS)
          : await this.profiles.removeGroup(key, group);
      if (changed) return changed;
      const current = await this.profiles.findByKey(key);
      if (!current) throw notFound(key);
      if (current.groups.includes(group) === (change === 'add')) return current;
      if (change === 'add' && current.groups.length >= MAX_GROUPS) {
        throw new DomainError('CONFLICT', `A profile holds at most ${MAX_GROUPS} groups.`);
      }
    }
    throw new DomainError('CONFLICT', 'The profile kept changing concurrently; retry the request.');
  }

  /**
   * Without clientId and accountId: the caller's own profile. With both: that sub profile of the
   * caller's subject in the request branch; both '' names the subject's root profile.
   */
  private targetKey(principal: ProfilePrincipal, target: ProfileTarget): ProfileKey {
    const { clientId, accountId } = target;
    if (clientId === undefined && accountId === undefined) return ownKey(principal);
    if (clientId === undefined || accountId === undefined) {
      throw new ValidationFailedError([
        {
          field: clientId === undefined ? 'clientId' : 'accountId',
          message: 'clientId and accountId must be given together',
        },
      ]);
    }
    if (clientId === '' && accountId === '') return rootKey(principal.subject);
    if (clientId === '' || accountId === '') {
      throw new ValidationFailedError([
        {
          field: clientId === '' ? 'clientId' : 'accountId',
          message:
            'clientId and accountId must both be non-empty, or both empty for the root profile',
        },
      ]);
    }
    return { subject: principal.subject, branch: principal.branch, clientId, accountId };
  }

  private async findOrThrow(key: ProfileKey): Promise<Profile> {
    const profile = await this.profiles.findByKey(key);
    if (!profile) throw notFound(key);
    return profile;
  }

  /** The dotted update for a PUT /profile on this profile; null when there is nothing to write. */
  private planUpdate(profile: Profile, update: ProfileUpdate): DottedUpdate | null {
    const set: Record<string, unknown> = {};
    const unset: string[] = [];
    const results: Record<string, unknown> = {};
    if (update.avatar !== undefined) set.avatar = update.avatar ?? '';
    for (const field of ['settings', 'metadata'] as const) {
      const patch = update[field];
      if (patch === undefined) continue;
      if (patch === null) {
        if (Object.keys(profile[field]).length > 0) set[field] = {};
        continue;
      }
      const result = mergePatch(profile[field], patch, field);
      results[field] = result.merged;
      Object.assign(set, result.set);
      unset.push(...result.unset);
    }
    this.assertWithinSize(results);
    return Object.keys(set).length > 0 || unset.length > 0 ? { set, unset } : null;
  }

  /** The size budget on what would be stored (after a merge), per field. */
  private assertWithinSize(values: Record<string, unknown>): void {
    const max = this.config.limits.profileJsonMaxBytes;
    const errors: FieldError[] = [];
    for (const [field, value] of Object.entries(values)) {
      const size = serializedSize(value);
      if (size > max) {
        errors.push({
          field,
          message: `the stored result would be ${size} bytes serialized; the limit is ${max}`,
        });
      }
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
  }
}
