import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { Plan } from '../profile';
import { TeamDocument } from './team.schema';

export interface Team {
  id: string;
  name: string;
  /** The plans the team holds (docs/plans.md); teams made before plans have none. */
  plans: Plan[];
  createdAt: Date;
}

function plansOf(doc: Pick<TeamDocument, 'plans'>): Plan[] {
  return (doc.plans ?? []).map((p) => ({ ...p, metadata: p.metadata ?? {} }));
}

function toTeam(doc: TeamDocument): Team {
  return { id: doc._id, name: doc.name, plans: plansOf(doc), createdAt: doc.createdAt };
}

@Injectable()
export class TeamRepository implements OnModuleInit {
  constructor(@InjectModel(TeamDocument.name) private readonly teams: Model<TeamDocument>) {}

  async onModuleInit(): Promise<void> {
    await this.teams.init();
  }

  async insert(id: string, name: string): Promise<Team> {
    return toTeam((await this.teams.create({ _id: id, name })).toObject<TeamDocument>());
  }

  async findById(id: string): Promise<Team | null> {
    const doc = await this.teams.findById(id).lean<TeamDocument>().exec();
    return doc ? toTeam(doc) : null;
  }

  async findByIds(ids: readonly string[]): Promise<Map<string, Team>> {
    const docs = await this.teams
      .find({ _id: { $in: ids } })
      .lean<TeamDocument[]>()
      .exec();
    return new Map(docs.map((doc) => [doc._id, toTeam(doc)]));
  }

  async exists(id: string): Promise<boolean> {
    return (await this.teams.exists({ _id: id }).exec()) !== null;
  }

  /** One page of teams by id; `more` when another page follows. */
  async listPage(page: {
    limit: number;
    afterId?: string;
  }): Promise<{ teams: Team[]; more: boolean }> {
    const { limit, afterId } = page;
    const docs = await this.teams
      .find(afterId === undefined ? {} : { _id: { $gt: afterId } })
      .sort({ _id: 1 })
      .limit(limit + 1)
      .lean<TeamDocument[]>()
      .exec();
    return { teams: docs.slice(0, limit).map(toTeam), more: docs.length > limit };
  }

  /** Replaces the team's plans; null when there is no such team. */
  async setPlans(id: string, plans: Plan[]): Promise<Team | null> {
    const doc = await this.teams
      .findOneAndUpdate({ _id: id }, { $set: { plans } }, { returnDocument: 'after' })
      .lean<TeamDocument>()
      .exec();
    return doc ? toTeam(doc) : null;
  }

  /** The team's plans alone; null when there is no such team. */
  async findPlans(id: string): Promise<Plan[] | null> {
    const doc = await this.teams
      .findOne({ _id: id }, { plans: 1 })
      .lean<Pick<TeamDocument, 'plans'>>()
      .exec();
    return doc ? plansOf(doc) : null;
  }

  /** Teams with a plan entry naming `planName` that has not ended at `now`. */
  async countHoldingPlan(planName: string, now: Date): Promise<number> {
    // FerretDB's $elemMatch takes operators only: the filter finds candidates (both conditions
    // met, perhaps by different entries) and each is checked here for one entry meeting both.
    const candidates = this.teams
      .find({ 'plans.planName': planName, 'plans.until': { $gt: now } }, { plans: 1 })
      .lean<Pick<TeamDocument, 'plans'>>()
      .cursor();
    let holding = 0;
    for await (const doc of candidates)
      if (doc.plans.some((plan) => plan.planName === planName && plan.until > now)) holding++;
    return holding;
  }

  async delete(id: string): Promise<void> {
    await this.teams.deleteOne({ _id: id }).exec();
  }
}
