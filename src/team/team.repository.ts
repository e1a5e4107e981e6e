import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TeamDocument } from './team.schema';

export interface Team {
  id: string;
  name: string;
  createdAt: Date;
}

function toTeam(doc: TeamDocument): Team {
  return { id: doc._id, name: doc.name, createdAt: doc.createdAt };
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

  async delete(id: string): Promise<void> {
    await this.teams.deleteOne({ _id: id }).exec();
  }
}
