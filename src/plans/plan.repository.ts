import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { PLAN_LIMIT_NAMES, type PlanLimits } from './plan-limits';
import { PlanDocument } from './plan.schema';

/** A plan of the catalogue as the service layer sees it. */
export interface Plan {
  name: string;
  limits: PlanLimits;
  metadata: Record<string, unknown>;
  version: number;
  updatedAt: Date;
}

/** What a PUT stores of a plan. */
export interface PlanContent {
  limits: PlanLimits;
  metadata: Record<string, unknown>;
}

/** Only the known limit names, in their order, whatever an older document holds. */
function limitsOf(stored: PlanLimits | undefined): PlanLimits {
  const limits: PlanLimits = {};
  for (const name of PLAN_LIMIT_NAMES) {
    const value = stored?.[name];
    if (typeof value === 'number') limits[name] = value;
  }
  return limits;
}

function toPlan(doc: PlanDocument): Plan {
  return {
    name: doc._id,
    limits: limitsOf(doc.limits),
    metadata: doc.metadata ?? {},
    version: doc.version,
    updatedAt: doc.updatedAt,
  };
}

/** The plan catalogue (`plans`): a handful of documents, read whole. */
@Injectable()
export class PlanRepository implements OnModuleInit {
  constructor(@InjectModel(PlanDocument.name) private readonly plans: Model<PlanDocument>) {}

  async onModuleInit(): Promise<void> {
    await this.plans.init();
  }

  /** Every plan, by name. */
  async list(): Promise<Plan[]> {
    const docs = await this.plans.find().sort({ _id: 1 }).lean<PlanDocument[]>().exec();
    return docs.map(toPlan);
  }

  async find(name: string): Promise<Plan | null> {
    const doc = await this.plans.findById(name).lean<PlanDocument>().exec();
    return doc ? toPlan(doc) : null;
  }

  /** Creates the plan at version 1; DUPLICATE when it exists. */
  async insert(name: string, content: PlanContent): Promise<Plan | Duplicate> {
    const doc = { _id: name, ...content, version: 1, updatedAt: new Date() };
    return orDuplicate(async () => {
      await this.plans.create(doc);
      return toPlan(doc);
    });
  }

  /** Replaces the plan if it is still at `version`; null when it is not (or gone). */
  async replace(name: string, version: number, content: PlanContent): Promise<Plan | null> {
    const doc = await this.plans
      .findOneAndUpdate(
        { _id: name, version },
        { $set: { ...content, updatedAt: new Date() }, $inc: { version: 1 } },
        { returnDocument: 'after' },
      )
      .lean<PlanDocument>()
      .exec();
    return doc ? toPlan(doc) : null;
  }

  /** Deletes the plan if it is still at `version`; whether it did. */
  async delete(name: string, version: number): Promise<boolean> {
    return (await this.plans.deleteOne({ _id: name, version }).exec()).deletedCount === 1;
  }
}
