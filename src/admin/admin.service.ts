import { Injectable } from '@nestjs/common';
import type { ApiKeyRecord } from '../auth/api-key.repository';
import { ApiKeyService } from '../auth/api-key.service';
import { CollectionsService } from '../data';
import { ProfileService, type PlanInput, type Profile } from '../profile';
import { TeamService, type MyTeam, type Team } from '../team';

/** A user as the operator sees it: its root profile, keys, teams and quota use. */
export interface UserDetail {
  profile: Profile;
  keys: ApiKeyRecord[];
  teams: MyTeam[];
  /** Collections used and allowed in the standard branch. */
  collections: { used: number; limit: number };
}

/** What the operator API does across modules: users and teams with their first keys. */
@Injectable()
export class AdminService {
  constructor(
    private readonly profiles: ProfileService,
    private readonly keys: ApiKeyService,
    private readonly teams: TeamService,
    private readonly collections: CollectionsService,
  ) {}

  async createUser(email: string, subject?: string): Promise<{ profile: Profile; apiKey: string }> {
    const profile = await this.profiles.createUser(email, subject);
    const { apiKey } = await this.keys.issueRootKey(profile.subject);
    return { profile, apiKey };
  }

  async createTeam(name: string): Promise<{ team: Team; apiKey: string }> {
    const team = await this.teams.create(name);
    const { apiKey } = await this.keys.issueTeamKey(team.id);
    return { team, apiKey };
  }

  listUsers(options: { limit: number; afterSubject?: string; email?: string }) {
    return this.profiles.listUsers(options);
  }

  /** A user with its keys in every branch, its teams and its collections in the standard branch. */
  async getUser(subject: string): Promise<UserDetail> {
    const profile = await this.profiles.getRoot(subject);
    const [keys, teams, collections] = await Promise.all([
      this.keys.list({ subject, boundBranch: null }),
      this.teams.teamsOf(subject),
      this.collections.quotaOf({ kind: 'user', id: subject }, ''),
    ]);
    return { profile, keys, teams, collections };
  }

  setPlans(subject: string, plans: PlanInput[]): Promise<Profile> {
    return this.profiles.setPlans(subject, plans);
  }
}
