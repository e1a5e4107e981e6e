import { Injectable } from '@nestjs/common';
import { ApiKeyService } from '../auth/api-key.service';
import { ProfileService, type PlanInput, type Profile } from '../profile';
import { TeamService, type Team } from '../team';

@Injectable()
export class AdminService {
  constructor(
    private readonly profiles: ProfileService,
    private readonly keys: ApiKeyService,
    private readonly teams: TeamService,
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

  setPlans(subject: string, plans: PlanInput[]): Promise<Profile> {
    return this.profiles.setPlans(subject, plans);
  }
}
