import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TeamDocument } from './team.schema';

export interface Team {
  id: string;
  name: string;
  createdAt: Date;
}

@Injectable()
export class TeamRepository {
  constructor(@InjectModel(TeamDocument.name) private readonly teams: Model<TeamDocument>) {}

  async insert(id: string, name: string): Promise<Team> {
    const doc = (await this.teams.create({ _id: id, name })).toObject<TeamDocument>();
    return { id: doc._id, name: doc.name, createdAt: doc.createdAt };
  }
}
