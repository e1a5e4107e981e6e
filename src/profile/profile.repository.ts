import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { DUPLICATE, orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { atRevision, nextRevision } from '../common/mongo/revision';
import type { DottedUpdate } from './merge-patch';
import { ProfileDocument, UserDocument } from './profile.schema';
import type { Plan, Profile } from './profile.types';

/** Index key of a profile; root profiles have branch = clientId = accountId = ''. */
export interface ProfileKey {
  subject: string;
  branch: string;
  clientId: string;
  accountId: string;
}

export function rootKey(subject: string): ProfileKey {
  return { subject, branch: '', clientId: '', accountId: '' };
}

export function toProfile(doc: ProfileDocument): Profile {
  return {
    id: doc._id.toHexString(),
    subject: doc.subject,
    accountId: doc.accountId ?? '',
    clientId: doc.clientId ?? '',
    branch: doc.branch ?? '',
    plans: (doc.plans ?? []).map((p) => ({
      planName: p.planName,
      since: p.since,
      until: p.until,
      metadata: p.metadata ?? {},
    })),
    avatar: doc.avatar ?? '',
    email: doc.email ?? '',
    settings: doc.settings ?? {},
    metadata: doc.metadata ?? {},
    groups: doc.groups ?? [],
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    revision: doc.revision ?? 0,
  };
}

/** Every write of a profile moves its revision (and so its ETag) in the same update. */
const BUMP = nextRevision('revision');

@Injectable()
export class ProfileRepository implements OnModuleInit {
  constructor(
    @InjectModel(ProfileDocument.name) private readonly profiles: Model<ProfileDocument>,
    @InjectModel(UserDocument.name) private readonly users: Model<UserDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await Promise.all([this.profiles.init(), this.users.init()]);
  }

  /** Registers a user; DUPLICATE when the subject or the email is taken (unique indexes decide). */
  async insertUser(subject: string, email: string): Promise<void | Duplicate> {
    const created = await orDuplicate(() => this.users.create({ _id: subject, email }));
    return created === DUPLICATE ? DUPLICATE : undefined;
  }

  async deleteUser(subject: string): Promise<void> {
    await this.users.deleteOne({ _id: subject }).exec();
  }

  /**
   * One page of registered users by subject, optionally with one email or an email prefix; at
   * most `limit`. The prefix is a range of the email index (no pattern: nothing to escape).
   */
  async listUsers(options: {
    limit: number;
    afterSubject?: string;
    email?: string;
    emailPrefix?: string;
  }): Promise<{ subject: string; email: string; createdAt: Date }[]> {
    const { email, emailPrefix } = options;
    const emailFilter = {
      ...(email !== undefined ? { $eq: email } : {}),
      ...(emailPrefix !== undefined ? { $gte: emailPrefix, $lt: `${emailPrefix}\u{10FFFF}` } : {}),
    };
    const docs = await this.users
      .find({
        ...(options.afterSubject !== undefined ? { _id: { $gt: options.afterSubject } } : {}),
        ...(Object.keys(emailFilter).length > 0 ? { email: emailFilter } : {}),
      })
      .sort({ _id: 1 })
      .limit(options.limit)
      .lean<UserDocument[]>()
      .exec();
    return docs.map((doc) => ({ subject: doc._id, email: doc.email, createdAt: doc.createdAt }));
  }

  /** Deletes every profile of a subject, root and sub, in every branch. */
  async deleteAllOfSubject(subject: string): Promise<void> {
    await this.profiles.deleteMany({ subject }).exec();
  }

  async userExists(subject: string): Promise<boolean> {
    return (await this.users.exists({ _id: subject }).exec()) !== null;
  }

  /** Inserts a profile; DUPLICATE when one with the same key exists (unique index, no pre-check). */
  async insert(
    key: ProfileKey,
    fields: Partial<Omit<Profile, 'id' | 'createdAt' | 'updatedAt'>>,
    id = new Types.ObjectId(),
  ): Promise<Profile | Duplicate> {
    const created = await orDuplicate(() => this.profiles.create({ ...fields, ...key, _id: id }));
    return created === DUPLICATE ? DUPLICATE : toProfile(created.toObject<ProfileDocument>());
  }

  async findById(id: string): Promise<Profile | null> {
    const doc = await this.profiles.findById(id).lean<ProfileDocument>().exec();
    return doc ? toProfile(doc) : null;
  }

  /** Deletes the profile; false when there is none. */
  async deleteByKey(key: ProfileKey): Promise<boolean> {
    const result = await this.profiles.deleteOne(key).exec();
    return result.deletedCount === 1;
  }

  async findByKey(key: ProfileKey): Promise<Profile | null> {
    const doc = await this.profiles.findOne(key).lean<ProfileDocument>().exec();
    return doc ? toProfile(doc) : null;
  }

  /**
   * Sub profiles of a subject in a branch in creation (`_id`) order, after `afterId`, optionally
   * of one OAuth client; at most `limit`. Root profiles (clientId '') are not sub profiles.
   */
  async listSubs(
    subject: string,
    branch: string,
    options: { clientId?: string; afterId?: string; limit: number },
  ): Promise<Profile[]> {
    const docs = await this.profiles
      .find({
        subject,
        branch,
        clientId: options.clientId ?? { $ne: '' },
        ...(options.afterId ? { _id: { $gt: new Types.ObjectId(options.afterId) } } : {}),
      })
      .sort({ _id: 1 })
      .limit(options.limit)
      .lean<ProfileDocument[]>()
      .exec();
    return docs.map(toProfile);
  }

  /** Every sub profile of a subject, by branch then creation (an account export). */
  async listSubsInEveryBranch(subject: string): Promise<Profile[]> {
    const docs = await this.profiles
      .find({ subject, clientId: { $ne: '' } })
      .sort({ branch: 1, _id: 1 })
      .lean<ProfileDocument[]>()
      .exec();
    return docs.map(toProfile);
  }

  /** Sub profiles of a subject in a branch with this accountId (one per OAuth client), at most `limit`. */
  async findByAccount(
    subject: string,
    branch: string,
    accountId: string,
    limit: number,
  ): Promise<Profile[]> {
    const docs = await this.profiles
      .find({ subject, branch, accountId })
      .limit(limit)
      .lean<ProfileDocument[]>()
      .exec();
    return docs.map(toProfile);
  }

  /**
   * Applies a dotted-path update if the profile is still at `revision` (a missing counter counts
   * as 0), bumping it. Null when the profile is gone or was changed meanwhile.
   */
  async updateIfUnchanged(
    key: ProfileKey,
    revision: number,
    update: DottedUpdate,
  ): Promise<Profile | null> {
    const doc = await this.profiles
      .findOneAndUpdate(
        { ...key, ...atRevision('revision', [revision]) },
        {
          ...(Object.keys(update.set).length > 0 ? { $set: update.set } : {}),
          ...(update.unset.length > 0
            ? { $unset: Object.fromEntries(update.unset.map((path) => [path, ''])) }
            : {}),
          ...BUMP,
        },
        { returnDocument: 'after' },
      )
      .lean<ProfileDocument>()
      .exec();
    return doc ? toProfile(doc) : null;
  }

  /**
   * Adds the group if it is absent and the profile holds fewer than `maxGroups` (one atomic
   * query), and only at `revision` when one is given. Null when nothing changed: no such
   * profile, group present, profile full, or another revision.
   */
  async addGroup(
    key: ProfileKey,
    group: string,
    maxGroups: number,
    revision?: number,
  ): Promise<Profile | null> {
    const doc = await this.profiles
      .findOneAndUpdate(
        {
          ...key,
          ...(revision === undefined ? {} : atRevision('revision', [revision])),
          groups: { $ne: group },
          [`groups.${maxGroups - 1}`]: { $exists: false },
        },
        { $addToSet: { groups: group }, ...BUMP },
        { returnDocument: 'after' },
      )
      .lean<ProfileDocument>()
      .exec();
    return doc ? toProfile(doc) : null;
  }

  /**
   * Removes the group (one atomic query), only at `revision` when one is given. Null when
   * nothing changed: no such profile or group, or another revision.
   */
  async removeGroup(key: ProfileKey, group: string, revision?: number): Promise<Profile | null> {
    const doc = await this.profiles
      .findOneAndUpdate(
        {
          ...key,
          ...(revision === undefined ? {} : atRevision('revision', [revision])),
          groups: group,
        },
        { $pull: { groups: group }, ...BUMP },
        { returnDocument: 'after' },
      )
      .lean<ProfileDocument>()
      .exec();
    return doc ? toProfile(doc) : null;
  }

  /** The plans of the profile with this key, alone; null when there is no such profile. */
  async findPlans(key: ProfileKey): Promise<Plan[] | null> {
    const doc = await this.profiles
      .findOne(key, { plans: 1 })
      .lean<Pick<ProfileDocument, 'plans'>>()
      .exec();
    return doc ? (doc.plans ?? []).map((p) => ({ ...p, metadata: p.metadata ?? {} })) : null;
  }

  /** Profiles with a plan entry naming `planName` that has not ended at `now`. */
  async countHoldingPlan(planName: string, now: Date): Promise<number> {
    // FerretDB's $elemMatch takes operators only: the filter finds candidates (both conditions
    // met, perhaps by different entries) and each is checked here for one entry meeting both.
    const candidates = this.profiles
      .find({ 'plans.planName': planName, 'plans.until': { $gt: now } }, { plans: 1 })
      .lean<Pick<ProfileDocument, 'plans'>>()
      .cursor();
    let holding = 0;
    for await (const doc of candidates)
      if (doc.plans.some((plan) => plan.planName === planName && plan.until > now)) holding++;
    return holding;
  }

  async setPlans(key: ProfileKey, plans: Plan[]): Promise<Profile | null> {
    const doc = await this.profiles
      .findOneAndUpdate(key, { $set: { plans }, ...BUMP }, { returnDocument: 'after' })
      .lean<ProfileDocument>()
      .exec();
    return doc ? toProfile(doc) : null;
  }
}
