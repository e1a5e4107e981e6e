import { Inject, Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth';
import { ValidationFailedError, type FieldError } from '../common/errors';
import { checkJson } from '../common/json';
import { APP_CONFIG, type AppConfig } from '../config';
import { DUPLICATE } from '../common/mongo/duplicate';
import { FallbackWriteQueue } from '../common/mongo/fallback-database';
import {
  AmbiguousTargetError,
  ConcurrentChangeError,
  DuplicateUserError,
  OnlyOwnProfileError,
  ProfileExistsError,
  ProfileNotFoundError,
  SubProfileListForbiddenError,
  UserNotFoundError,
} from './profile.errors';
import { ADMIN_SUBJECT_GROUP } from './profile.constants';
import { profileActorOf, ProfileEvents } from './profile-events';
import {
  assertStoredSize,
  profileJsonLimits,
  profileJsonRules,
  type ProfileJsonLimits,
} from './profile-json';
import { ProfileRepository, rootKey, type ProfileKey } from './profile.repository';
import {
  assertOwnProfile,
  lockKey,
  ownKey,
  targetKey,
  type ProfilePrincipal,
} from './profile-target';
import type {
  NewSubProfile,
  Plan,
  PlanInput,
  Profile,
  ProfileTarget,
  SettingsValue,
} from './profile.types';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

/**
 * Users, and who may read or create which profile: the operator API's users and plans, GET
 * /profile and /profile/{accountId}, POST /profile. Changes of existing profiles are
 * ProfileUpdateService's.
 */
@Injectable()
export class ProfileService {
  private readonly limits: ProfileJsonLimits;

  constructor(
    private readonly profiles: ProfileRepository,
    private readonly writes: FallbackWriteQueue,
    private readonly profileEvents: ProfileEvents,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limits = profileJsonLimits(config);
  }

  /**
   * Registers a user and creates its root profile (operator API). The user registry's unique
   * indexes decide duplicates; without transactions, a failed profile insert removes the user again.
   */
  async createUser(email: string, subject: string = randomUUID()): Promise<Profile> {
    const normalizedEmail = email.trim().toLowerCase();
    if ((await this.profiles.insertUser(subject, normalizedEmail)) === DUPLICATE) {
      throw new DuplicateUserError();
    }
    try {
      const profile = await this.profiles.insert(rootKey(subject), { email: normalizedEmail });
      if (profile === DUPLICATE) {
        throw new DuplicateUserError(`A root profile for subject ${subject} exists already.`);
      }
      return profile;
    } catch (error) {
      await this.profiles.deleteUser(subject);
      throw error;
    }
  }

  /**
   * Registers a user with its root profile unless they exist (provisioning for an identity:
   * repeated after a crash or by concurrent requests, each call completes what is missing).
   * 'email-taken': another user has the email, nothing was written.
   */
  async ensureUser(subject: string, email: string): Promise<'ok' | 'email-taken'> {
    const normalizedEmail = email.trim().toLowerCase();
    if ((await this.profiles.insertUser(subject, normalizedEmail)) === DUPLICATE) {
      if (!(await this.profiles.userExists(subject))) return 'email-taken';
    }
    return 'ok';
  }

  /** Creates a user's root profile unless it exists (after ensureUser and its placement). */
  async ensureRoot(subject: string, email: string): Promise<void> {
    await this.profiles.insert(rootKey(subject), { email: email.trim().toLowerCase() });
  }

  /**
   * Registered users by subject (operator API); the email and its prefix are matched as emails are
   * stored (lower case).
   */
  listUsers(options: {
    limit: number;
    afterSubject?: string;
    email?: string;
    emailPrefix?: string;
  }) {
    const stored = (value: string | undefined) => value?.trim().toLowerCase();
    return this.profiles.listUsers({
      ...options,
      ...(options.email !== undefined ? { email: stored(options.email) } : {}),
      ...(options.emailPrefix !== undefined ? { emailPrefix: stored(options.emailPrefix) } : {}),
    });
  }

  /** Whether a user with this subject is registered. */
  userExists(subject: string): Promise<boolean> {
    return this.profiles.userExists(subject);
  }

  /**
   * Erases a user's profiles (root and sub, every branch), then the user registration: the last
   * step of an account erasure, so the subject stays taken until everything else is gone.
   */
  async eraseUser(subject: string): Promise<void> {
    await this.profiles.deleteAllOfSubject(subject);
    await this.profiles.deleteUser(subject);
  }

  async getRoot(subject: string): Promise<Profile> {
    const profile = await this.profiles.findByKey(rootKey(subject));
    if (!profile) throw new UserNotFoundError(subject);
    return profile;
  }

  /** The sub profile with this key, or null. */
  async findSub(key: ProfileKey): Promise<Profile | null> {
    return this.profiles.findByKey(key);
  }

  /** Every sub profile of a user, by branch then creation (an account export). */
  subProfilesInEveryBranch(subject: string): Promise<Profile[]> {
    return this.profiles.listSubsInEveryBranch(subject);
  }

  /** Replaces a user's plans (operator API); each plan's metadata follows the settings rules. */
  async setPlans(subject: string, input: PlanInput[]): Promise<Profile> {
    const plans = this.checkPlans(input);
    const key = rootKey(subject);
    // The feed names the profile by id: with the feed on, it is read first.
    const id = this.profileEvents.enabled ? (await this.profiles.findByKey(key))?.id : undefined;
    const write = () => this.profiles.setPlans(key, plans);
    const profile = await this.writes.run(lockKey(key), () =>
      id === undefined
        ? write()
        : this.profileEvents.record(
            profileActorOf('operator'),
            { subject, branch: '', id },
            'updated',
            write,
          ),
    );
    if (!profile) throw new UserNotFoundError(subject);
    return profile;
  }

  /** The plans of a user's root profile; [] when there is no such user. */
  async plansOf(subject: string): Promise<Plan[]> {
    return (await this.profiles.findPlans(rootKey(subject))) ?? [];
  }

  /** How many users hold `planName` at `now`: an entry naming it that has not ended. */
  countHoldingPlan(planName: string, now: Date): Promise<number> {
    return this.profiles.countHoldingPlan(planName, now);
  }

  /** GET /profile: the caller's own profile, or the targeted one (root callers). */
  async getProfile(principal: ProfilePrincipal, target: ProfileTarget): Promise<Profile> {
    const key = targetKey(principal, target);
    assertOwnProfile(principal, key);
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
      if (!isSelf) throw new OnlyOwnProfileError();
      return this.findOrThrow(ownKey(principal));
    }
    const { subject, branch } = principal;
    if (clientId !== undefined) return this.findOrThrow({ subject, branch, clientId, accountId });
    const found = await this.profiles.findByAccount(subject, branch, accountId, 2);
    if (found.length > 1) throw new AmbiguousTargetError(accountId, branch);
    const [profile] = found;
    if (!profile) throw new ProfileNotFoundError({ subject, branch, clientId: '', accountId });
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
    assertStoredSize({ userMetadata: settings }, this.limits.maxBytes);
    const id = new Types.ObjectId();
    const created = await this.profileEvents.record(
      profileActorOf(principal),
      { subject: key.subject, branch: key.branch, id: id.toHexString() },
      'created',
      async () => {
        const inserted = await this.profiles.insert(
          key,
          {
            email: input.email.trim().toLowerCase(),
            groups: [...new Set(input.groups ?? [])],
            settings,
          },
          id,
        );
        return inserted === DUPLICATE ? null : inserted;
      },
    );
    if (created !== null) return created;
    const existing = await this.profiles.findByKey(key);
    if (!existing) throw ConcurrentChangeError.createdAndRemoved(key);
    throw new ProfileExistsError(key, existing.id);
  }

  /**
   * GET /profiles: the caller's subject's sub profiles in the request branch, for root keys and
   * sub keys whose own profile (read now) holds admin:subject. One past the page is read to
   * tell whether another page follows.
   */
  async listSubProfiles(
    principal: ProfilePrincipal,
    page: { clientId?: string; afterId?: string; limit: number },
  ): Promise<{ profiles: Profile[]; more: boolean }> {
    if (principal.kind === 'sub') {
      const own = await this.profiles.findByKey(ownKey(principal));
      if (!own?.groups.includes(ADMIN_SUBJECT_GROUP)) throw new SubProfileListForbiddenError();
    }
    const found = await this.profiles.listSubs(principal.subject, principal.branch, {
      ...page,
      limit: page.limit + 1,
    });
    return { profiles: found.slice(0, page.limit), more: found.length > page.limit };
  }

  private async findOrThrow(key: ProfileKey): Promise<Profile> {
    const profile = await this.profiles.findByKey(key);
    if (!profile) throw new ProfileNotFoundError(key);
    return profile;
  }

  /**
   * The plans with their metadata checked (paths `0.metadata…`); every problem in one 400. The
   * team module checks a team's plans with it too: they follow the same rules.
   */
  checkPlans(input: PlanInput[]): Plan[] {
    const rules = profileJsonRules({ values: 'json', patch: false }, this.limits);
    const errors: FieldError[] = [];
    const plans = input.map(({ planName, since, until, metadata = {} }, i): Plan => {
      const checked = checkJson(metadata, rules, `${i}.metadata`);
      if (!checked.ok) errors.push(...checked.errors);
      const stored = checked.ok ? (checked.value as Plan['metadata']) : {};
      return { planName, since, until, metadata: stored };
    });
    if (errors.length > 0) throw new ValidationFailedError(errors);
    return plans;
  }
}
