import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { TeamMembershipLookup } from '../auth/team-memberships.port';
import { ForbiddenError } from '../common/errors';
import type { Tenant } from '../common/tenancy/namespace';
import { ProfileService, type Plan, type PlanInput } from '../profile';
import { TeamMembershipRepository, type TeamMembership } from './team-membership.repository';
import type { TeamRole } from './team-membership.schema';
import { TeamRepository, type Team } from './team.repository';
import { MemberNotFoundError, TeamNotFoundError } from './team.errors';

export interface TeamWithMembers extends Team {
  members: TeamMembership[];
}

export interface MyTeam {
  teamId: string;
  name: string;
  role: TeamRole;
}

/** A user's membership of a team, with when it began. */
export interface MyMembership extends MyTeam {
  createdAt: Date;
}

/** Teams and their members. Also answers auth's membership port (X-Team). */
@Injectable()
export class TeamService implements TeamMembershipLookup {
  constructor(
    private readonly teams: TeamRepository,
    private readonly members: TeamMembershipRepository,
    private readonly profiles: ProfileService,
  ) {}

  create(name: string): Promise<Team> {
    return this.teams.insert(randomUUID(), name);
  }

  async roleOf(teamId: string, subject: string): Promise<TeamRole | null> {
    return (await this.members.find(teamId, subject))?.role ?? null;
  }

  existingAmong(
    pairs: { teamId: string; subject: string }[],
  ): Promise<{ teamId: string; subject: string }[]> {
    return this.members.existingAmong(pairs);
  }

  list(page: { limit: number; afterId?: string }): Promise<{ teams: Team[]; more: boolean }> {
    return this.teams.listPage(page);
  }

  async get(id: string): Promise<TeamWithMembers> {
    const team = await this.teams.findById(id);
    if (!team) throw new TeamNotFoundError(id);
    return { ...team, members: await this.members.listForTeam(id) };
  }

  /**
   * Replaces the team's plans (operator), checked as a user's are: metadata follows the rules of
   * profile settings.
   */
  async setPlans(id: string, input: PlanInput[]): Promise<Team> {
    const team = await this.teams.setPlans(id, this.profiles.checkPlans(input));
    if (!team) throw new TeamNotFoundError(id);
    return team;
  }

  /** The team's plans; [] when there is no such team. */
  async plansOf(id: string): Promise<Plan[]> {
    return (await this.teams.findPlans(id)) ?? [];
  }

  /** How many teams hold `planName` at `now`: an entry naming it that has not ended. */
  countHoldingPlan(planName: string, now: Date): Promise<number> {
    return this.teams.countHoldingPlan(planName, now);
  }

  /** Adds a user to the team or changes its role (operator). */
  async putMember(teamId: string, subject: string, role: TeamRole): Promise<TeamMembership> {
    if (!(await this.teams.exists(teamId))) throw new TeamNotFoundError(teamId);
    // The root profile must exist: memberships of nobody would outlive every erasure.
    await this.profiles.getRoot(subject);
    return this.members.put(teamId, subject, role);
  }

  async removeMember(teamId: string, subject: string): Promise<void> {
    if (!(await this.teams.exists(teamId))) throw new TeamNotFoundError(teamId);
    if (!(await this.members.remove(teamId, subject)))
      throw new MemberNotFoundError(teamId, subject);
  }

  /** The teams a user belongs to, with its role in each. */
  async teamsOf(subject: string): Promise<MyTeam[]> {
    return (await this.membershipsOf(subject)).map(({ teamId, name, role }) => ({
      teamId,
      name,
      role,
    }));
  }

  /** The teams a user belongs to, with its role in each and since when (an account export). */
  async membershipsOf(subject: string): Promise<MyMembership[]> {
    const memberships = await this.members.listForSubject(subject);
    const teams = await this.teams.findByIds(memberships.map((m) => m.teamId));
    return memberships.flatMap((m) => {
      const team = teams.get(m.teamId);
      return team
        ? [{ teamId: m.teamId, name: team.name, role: m.role, createdAt: m.createdAt }]
        : [];
    });
  }

  exists(id: string): Promise<boolean> {
    return this.teams.exists(id);
  }

  /** Deletes the team record itself: the last step of a team erasure. */
  delete(id: string): Promise<void> {
    return this.teams.delete(id);
  }

  /** Deletes every membership of a user or of a team: part of an erasure. */
  deleteMembershipsOf(tenant: Tenant): Promise<void> {
    return this.members.deleteAllOf(tenant);
  }

  /**
   * Checks that `subject` is an admin member of the team: a non-member learns nothing (404, as
   * if there were no such team), a `member` gets 403.
   */
  async assertAdmin(teamId: string, subject: string): Promise<void> {
    const role = await this.roleOf(teamId, subject);
    if (role === null) throw new TeamNotFoundError(teamId);
    if (role !== 'admin')
      throw new ForbiddenError(`Only admin members manage the keys of team ${teamId}.`);
  }
}
