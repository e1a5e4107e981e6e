import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { DUPLICATE, orDuplicate } from '../common/mongo/duplicate';
import { AttemptClaimDocument } from './webhook.schema';

/** The `webhook_attempt_claims` collection: who sends which attempt of a delivery. */
@Injectable()
export class AttemptClaimsRepository {
  constructor(
    @InjectModel(AttemptClaimDocument.name) private readonly claims: Model<AttemptClaimDocument>,
  ) {}

  /** Inserts the claim; false when another instance inserted it first. */
  async claim(id: string): Promise<boolean> {
    const claimed = await orDuplicate(() => this.claims.create({ _id: id, createdAt: new Date() }));
    return claimed !== DUPLICATE;
  }

  async deleteCreatedBefore(before: Date): Promise<void> {
    await this.claims.deleteMany({ createdAt: { $lt: before } }).exec();
  }
}
