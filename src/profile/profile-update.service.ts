import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import { PreconditionFailedError } from '../common/errors';
import { ifMatchHolds, NO_PRECONDITION, type IfMatch } from '../common/http/etag';
import { FallbackWriteQueue } from '../common/mongo/fallback-database';
import { mergePatch, type DottedUpdate } from './merge-patch';
import { ADMIN_SUBJECT_GROUP, MAX_GROUPS } from './profile.constants';
import {
  ConcurrentChangeError,
  GroupChangeForbiddenError,
  GroupLimitError,
  MetadataForbiddenError,
  ProfileNotFoundError,
} from './profile.errors';
import { profileETag } from './profile-etag';
import { profileActorOf, ProfileEvents } from './profile-events';
import { assertStoredSize } from './profile-json';
import { ProfileRepository, type ProfileKey } from './profile.repository';
import {
  assertOwnProfile,
  lockKey,
  ownKey,
  targetKey,
  type ProfilePrincipal,
} from './profile-target';
import type { Profile, ProfileTarget, ProfileUpdate } from './profile.types';

/** Guarded writes retry after a concurrent change; this many attempts, then 409. */
const WRITE_ATTEMPTS = 5;

/**
 * Changes of existing profiles: PUT /profile (avatar, settings and metadata merge patches) and
 * the groups routes, each optionally conditional on the ETag the client read (If-Match).
 *
 * Concurrency: on MongoDB every write below is one atomic query, and PUT /profile's
 * read-merge-write and every If-Match write are guarded by the revision they read. FerretDB (the embedded development and test
 * database) rewrites whole documents without re-checking the filter, so there concurrent updates
 * of one document, even two $inc, lose each other. Writes to one profile are therefore also
 * queued in-process (`writes`, shared with ProfileService.setPlans), which makes a single instance
 * correct on FerretDB too; several instances need MongoDB, where the guard and the atomic
 * operators suffice.
 */
@Injectable()
export class ProfileUpdateService {
  private readonly maxJsonBytes: number;

  constructor(
    private readonly profiles: ProfileRepository,
    private readonly writes: FallbackWriteQueue,
    private readonly profileEvents: ProfileEvents,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxJsonBytes = config.limits.profileJsonMaxBytes;
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
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<Profile> {
    const key = targetKey(principal, target);
    assertOwnProfile(principal, key);
    if (principal.kind === 'sub' && update.metadata !== undefined) {
      throw new MetadataForbiddenError();
    }
    return this.writes.run(lockKey(key), () =>
      this.mergeIntoProfile(principal, key, update, ifMatch),
    );
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
    ifMatch: IfMatch = NO_PRECONDITION,
  ): Promise<Profile> {
    const key = targetKey(principal, target);
    if (principal.kind === 'sub') {
      const own = await this.profiles.findByKey(ownKey(principal));
      if (!own?.groups.includes(ADMIN_SUBJECT_GROUP)) throw new GroupChangeForbiddenError();
    }
    return this.writes.run(lockKey(key), () =>
      this.applyGroupChange(principal, key, group, change, ifMatch),
    );
  }

  /**
   * The profile a write starts from, after If-Match: 404 when it is missing (412 under
   * If-Match), 412 with the current ETag when If-Match does not name it.
   */
  private async readForWrite(key: ProfileKey, ifMatch: IfMatch): Promise<Profile> {
    const current = await this.profiles.findByKey(key);
    if (!current && ifMatch.kind === 'absent') throw new ProfileNotFoundError(key);
    const etag = current && profileETag(current);
    if (!current || !ifMatchHolds(ifMatch, etag)) throw new PreconditionFailedError(etag);
    return current;
  }

  /**
   * A write that misses its revision was overtaken by another: without If-Match it is redone on
   * the fresh profile; with If-Match the next read answers 412, since the tag moved on.
   */
  private async mergeIntoProfile(
    principal: ProfilePrincipal,
    key: ProfileKey,
    update: ProfileUpdate,
    ifMatch: IfMatch,
  ): Promise<Profile> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const profile = await this.readForWrite(key, ifMatch);
      const write = this.planUpdate(profile, update);
      if (!write) return profile;
      const updated = await this.profileEvents.record(
        profileActorOf(principal),
        { subject: key.subject, branch: key.branch, id: profile.id },
        'updated',
        () => this.profiles.updateIfUnchanged(key, profile.revision, write),
      );
      if (updated) return updated;
    }
    throw new ConcurrentChangeError();
  }

  /**
   * Without If-Match each change is one atomic query, and a read only follows when it changed
   * nothing. With If-Match the profile is read first and the change is conditional on the
   * revision the client named.
   */
  private async applyGroupChange(
    principal: ProfilePrincipal,
    key: ProfileKey,
    group: string,
    change: 'add' | 'remove',
    ifMatch: IfMatch,
  ): Promise<Profile> {
    // The feed names the profile by id: with the feed on, it is read first.
    const id = this.profileEvents.enabled ? (await this.profiles.findByKey(key))?.id : undefined;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const expected =
        ifMatch.kind === 'absent' ? undefined : (await this.readForWrite(key, ifMatch)).revision;
      const apply = (): Promise<Profile | null> =>
        change === 'add'
          ? this.profiles.addGroup(key, group, MAX_GROUPS, expected)
          : this.profiles.removeGroup(key, group, expected);
      const changed =
        id === undefined
          ? await apply()
          : await this.profileEvents.record(
              profileActorOf(principal),
              { subject: key.subject, branch: key.branch, id },
              'updated',
              apply,
            );
      if (changed) return changed;
      const current = await this.profiles.findByKey(key);
      if (!current && ifMatch.kind === 'absent') throw new ProfileNotFoundError(key);
      if (!current || (expected !== undefined && current.revision !== expected)) continue;
      if (current.groups.includes(group) === (change === 'add')) return current;
      if (change === 'add' && current.groups.length >= MAX_GROUPS) {
        throw new GroupLimitError(MAX_GROUPS);
      }
    }
    throw new ConcurrentChangeError();
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
    assertStoredSize(results, this.maxJsonBytes);
    return Object.keys(set).length > 0 || unset.length > 0 ? { set, unset } : null;
  }
}
