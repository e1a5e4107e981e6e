import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { isDuplicateKeyError } from '../common/errors';
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
  };
}

@Injectable()
export class ProfileRepository implements OnModuleInit {
  constructor(
    @InjectModel(ProfileDocument.name) private readonly profiles: Model<ProfileDocument>,
    @InjectModel(UserDocument.name) private readonly users: Model<UserDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await Promise.all([this.profiles.init(), this.users.init()]);
  }

  /** Registers a user; false when the subject or the email is taken (unique indexes decide). */
  async insertUser(subject: string, email: string): Promise<boolean> {
    try {
      await this.users.create({ _id: subject, email });
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async deleteUser(subject: string): Promise<void> {
    await this.users.deleteOne({ _id: subject }).exec();
  }

  async userExists(subject: string): Promise<boolean> {
    return (await this.users.exists({ _id: subject }).exec()) !== null;
  }

  /** Inserts a profile; null when one with the same key exists (unique index, no pre-check). */
  async insert(
    key: ProfileKey,
    fields: Partial<Omit<Profile, 'id' | 'createdAt' | 'updatedAt'>>,
  ): Promise<Profile | null> {
    try {
      const created = await this.profiles.create({ ...fields, ...key });
      return toProfile(created.toObject<ProfileDocument>());
    } catch (error) {
      if (isDuplicateKeyError(error)) return null;
      throw error;
    }
  }

  async findByKey(key: ProfileKey): Promise<Profile | null> {
    const doc = await this.profiles.findOne(key).lean<ProfileDocument>().exec();
    return doc ? toProfile(doc) : null;
  }

  async setPlans(key: ProfileKey, plans: Plan[]): Promise<Profile | null> {
    const doc = await this.profiles
      .findOneAndUpdate(key, { $set: { plans } }, { returnDocument: 'after' })
      .lean<ProfileDocument>()
      .exec();
    return doc ? toProfile(doc) : null;
  }
}
