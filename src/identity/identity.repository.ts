import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { IdentityDocument, type IdentityOrigin } from './identity.schema';

/** A stored identity (identity.schema.ts). */
export interface Identity {
  id: string;
  issuer: string;
  subject: string;
  userSubject: string;
  how: IdentityOrigin;
  settled: boolean;
  createdAt: Date;
}

function toIdentity(doc: IdentityDocument): Identity {
  return {
    id: doc._id,
    issuer: doc.issuer,
    subject: doc.subject,
    userSubject: doc.userSubject,
    how: doc.how,
    settled: doc.settled ?? false,
    createdAt: doc.createdAt,
  };
}

@Injectable()
export class IdentityRepository implements OnModuleInit {
  constructor(
    @InjectModel(IdentityDocument.name) private readonly identities: Model<IdentityDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.identities.init();
  }

  async find(id: string): Promise<Identity | null> {
    const doc = await this.identities.findById(id).lean<IdentityDocument>().exec();
    return doc ? toIdentity(doc) : null;
  }

  async findMany(ids: string[]): Promise<Identity[]> {
    const docs = await this.identities
      .find({ _id: { $in: ids } })
      .lean<IdentityDocument[]>()
      .exec();
    return docs.map(toIdentity);
  }

  /**
   * Inserts the identity unless it exists; either way the stored one, the first insert's (the
   * `_id`'s uniqueness decides between concurrent inserts), or null when it was removed between
   * the refused insert and the read.
   */
  async claim(identity: Omit<Identity, 'settled' | 'createdAt'>): Promise<Identity | null> {
    const created = await orDuplicate(() =>
      this.identities.create({
        _id: identity.id,
        issuer: identity.issuer,
        subject: identity.subject,
        userSubject: identity.userSubject,
        how: identity.how,
        settled: identity.how === 'linked',
      }),
    );
    if (created !== DUPLICATE) return toIdentity(created.toObject<IdentityDocument>());
    return this.find(identity.id);
  }

  /** Records that a provisioned identity's user is complete (only ever set, never cleared). */
  async markSettled(id: string): Promise<void> {
    await this.identities.updateOne({ _id: id }, { $set: { settled: true } }).exec();
  }

  /** Removes a claim that could not become a user, unless it was completed meanwhile. */
  async release(id: string, userSubject: string): Promise<void> {
    await this.identities.deleteOne({ _id: id, userSubject, settled: false }).exec();
  }

  /** A user's identities, oldest first. */
  async listOf(userSubject: string): Promise<Identity[]> {
    const docs = await this.identities
      .find({ userSubject })
      .sort({ createdAt: 1, _id: 1 })
      .lean<IdentityDocument[]>()
      .exec();
    return docs.map(toIdentity);
  }

  /** Removes a user's identities except `keep`; the ids removed. */
  async removeOf(userSubject: string, keep: string[] = []): Promise<string[]> {
    const filter = { userSubject, ...(keep.length > 0 ? { _id: { $nin: keep } } : {}) };
    const docs = await this.identities.find(filter, { _id: 1 }).lean<{ _id: string }[]>().exec();
    if (docs.length === 0) return [];
    const ids = docs.map((doc) => doc._id);
    await this.identities.deleteMany({ userSubject, _id: { $in: ids } }).exec();
    return ids;
  }

  /** Of these ids, those stored: one command. */
  async existingAmong(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const docs = await this.identities
      .find({ _id: { $in: ids } }, { _id: 1 })
      .lean<{ _id: string }[]>()
      .exec();
    return docs.map((doc) => doc._id);
  }
}
