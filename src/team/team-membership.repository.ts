import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { orDuplicate } from '../common/mongo/duplicate';
import type { Tenant } from '../common/tenancy/namespace';
import { TeamMembershipDocument, type TeamRole } from './team-membership.schema';

export interface TeamMembership {
  teamId: string;
  subject: string;
  role: TeamRole;
  createdAt: Date;
}

function toMembership(doc: TeamMembershipDocument): TeamMembership {
  return { teamId: doc.teamId, subject: doc.subject, role: doc.role, createdAt: doc.createdAt };
}

/** The memberships a tenant is part of: a user as member, a team as the team. */
function membershipsOf(tenant: Tenant): { subject: string } | { teamId: string } {
  switch (tenant.kind) {
    case 'user':
      return { subject: tenant.id };
    case 'team':
      return { teamId: tenant.id };
  }
}

@Injectable()
export class TeamMembershipRepository implements OnModuleInit {
  constructor(
    @InjectModel(TeamMembershipDocument.name)
    private readonly members: Model<TeamMembershipDocument>,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.members.init();
  }

  async find(teamId: string, subject: string): Promise<TeamMembership | null> {
    const doc = await this.members
      .findOne({ teamId, subject })
      .lean<TeamMembershipDocument>()
      .exec();
    return doc ? toMembership(doc) : null;
  }

  /** Which of these memberships exist, in one query. */
  async existingAmong(
    pairs: { teamId: string; subject: string }[],
  ): Promise<{ teamId: string; subject: string }[]> {
    if (pairs.length === 0) return [];
    const docs = await this.members
      .find({ $or: pairs.map(({ teamId, subject }) => ({ teamId, subject })) })
      .select({ teamId: 1, subject: 1 })
      .lean<Pick<TeamMembershipDocument, 'teamId' | 'subject'>[]>()
      .exec();
    return docs.map(({ teamId, subject }) => ({ teamId, subject }));
  }

  /**
   * Makes `subject` a member with `role`: an insert (the unique index decides between concurrent
   * ones), else a role change of the membership that is there.
   */
  async put(teamId: string, subject: string, role: TeamRole): Promise<TeamMembership> {
    await orDuplicate(() => this.members.create({ teamId, subject, role }));
    const doc = await this.members
      .findOneAndUpdate({ teamId, subject }, { $set: { role } }, { returnDocument: 'after' })
      .lean<TeamMembershipDocument>()
      .exec();
    if (!doc) return this.put(teamId, subject, role);
    return toMembership(doc);
  }

  /** False when there was no such membership. */
  async remove(teamId: string, subject: string): Promise<boolean> {
    return (await this.members.deleteOne({ teamId, subject }).exec()).deletedCount === 1;
  }

  async listForTeam(teamId: string): Promise<TeamMembership[]> {
    const docs = await this.members
      .find({ teamId })
      .sort({ createdAt: 1, _id: 1 })
      .lean<TeamMembershipDocument[]>()
      .exec();
    return docs.map(toMembership);
  }

  async listForSubject(subject: string): Promise<TeamMembership[]> {
    const docs = await this.members
      .find({ subject })
      .sort({ teamId: 1 })
      .lean<TeamMembershipDocument[]>()
      .exec();
    return docs.map(toMembership);
  }

  /** Deletes every membership of a user (all its teams) or of a team (all its members). */
  async deleteAllOf(tenant: Tenant): Promise<void> {
    await this.members.deleteMany(membershipsOf(tenant)).exec();
  }
}
