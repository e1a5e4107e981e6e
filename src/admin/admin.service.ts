import { Injectable } from '@nestjs/common';
import type { ApiKeyRecord } from '../auth/api-key.repository';
import { ApiKeyService } from '../auth/api-key.service';
import { CollectionsService } from '../data';
import { IdentityLinks, type LinkedIdentity } from '../identity';
import type { Tenant } from '../common/tenancy/namespace';
import { DataClusters, TenantPlacements, type TenantLocation } from '../placement';
import { PlanLimitsCache } from '../plans';
import { ProfileService, type PlanInput, type Profile } from '../profile';
import { TeamService, type MyTeam, type Team, type TeamWithMembers } from '../team';

/** A user as the operator sees it: its root profile, keys, teams and quota use. */
export interface UserDetail {
  profile: Profile;
  keys: ApiKeyRecord[];
  teams: MyTeam[];
  /** Collections used and allowed in the standard branch. */
  collections: { used: number; limit: number | null };
  identities: LinkedIdentity[];
}

export interface ClusterSummary {
  name: string;
  region: string;
  open: boolean;
  tenants: number;
  collections: number;
  reachable: boolean;
}

/** What the operator API does across modules: users and teams with their first keys. */
@Injectable()
export class AdminService {
  constructor(
    private readonly profiles: ProfileService,
    private readonly keys: ApiKeyService,
    private readonly teams: TeamService,
    private readonly collections: CollectionsService,
    private readonly placements: TenantPlacements,
    private readonly clusterList: DataClusters,
    private readonly identities: IdentityLinks,
    private readonly planLimits: PlanLimitsCache,
  ) {}

  /**
   * A user, placed on a cluster (of `region`, if given) before its first key exists, so no request
   * of the user can run before its placement. The region is checked before anything is written.
   */
  async createUser(
    email: string,
    subject?: string,
    region?: string,
  ): Promise<{ profile: Profile; apiKey: string }> {
    const cluster = await this.placements.choose(region);
    const profile = await this.profiles.createUser(email, subject);
    await this.placements.place({ kind: 'user', id: profile.subject }, cluster);
    const { apiKey } = await this.keys.issueRootKey(profile.subject);
    return { profile, apiKey };
  }

  /** A team, placed like a user before its key exists and before it can have members. */
  async createTeam(name: string, region?: string): Promise<{ team: Team; apiKey: string }> {
    const cluster = await this.placements.choose(region);
    const team = await this.teams.create(name);
    await this.placements.place({ kind: 'team', id: team.id }, cluster);
    const { apiKey } = await this.keys.issueTeamKey(team.id);
    return { team, apiKey };
  }

  /** Where a tenant's data lives; 404 (PROFILE_NOT_FOUND, TEAM_NOT_FOUND) for no such tenant. */
  async placementOf(tenant: Tenant): Promise<TenantLocation> {
    if (tenant.kind === 'user') await this.profiles.getRoot(tenant.id);
    else await this.teams.get(tenant.id);
    return this.placements.locate(tenant);
  }

  /** Every cluster of DATA_CLUSTERS with its tenants, collections and whether it answers. */
  async clusters(): Promise<ClusterSummary[]> {
    return Promise.all(
      this.clusterList.list().map(async (cluster) => {
        const [tenants, collections, reachable] = await Promise.all([
          this.placements.tenantsOn(cluster.name),
          this.collections.countOnCluster(cluster.name),
          this.clusterList.reachable(cluster.name),
        ]);
        return {
          name: cluster.name,
          region: cluster.region,
          open: cluster.open,
          tenants,
          collections,
          reachable,
        };
      }),
    );
  }

  listUsers(options: {
    limit: number;
    afterSubject?: string;
    email?: string;
    emailPrefix?: string;
  }) {
    return this.profiles.listUsers(options);
  }

  /** A user with its keys in every branch, its teams and its collections in the standard branch. */
  async getUser(subject: string): Promise<UserDetail> {
    const profile = await this.profiles.getRoot(subject);
    const [keys, teams, collections, identities] = await Promise.all([
      this.keys.list({ subject, boundBranch: null }),
      this.teams.teamsOf(subject),
      this.collections.quotaOf({ kind: 'user', id: subject }, ''),
      this.identities.listOf(subject),
    ]);
    return { profile, keys, teams, collections, identities };
  }

  /** Replaces a user's identities (links the new ones, unlinks the others). */
  setIdentities(
    subject: string,
    identities: { issuer: string; subject: string }[],
  ): Promise<LinkedIdentity[]> {
    return this.identities.replace(subject, identities);
  }

  /**
   * Replaces a user's plans. This instance's limits take them at once; the others within
   * PLAN_CACHE_MS (docs/plans.md).
   */
  async setPlans(subject: string, plans: PlanInput[]): Promise<Profile> {
    const profile = await this.profiles.setPlans(subject, plans);
    this.planLimits.entriesChanged({ kind: 'user', id: subject });
    return profile;
  }

  /** Replaces a team's plans, taking effect as a user's do. */
  async setTeamPlans(id: string, plans: PlanInput[]): Promise<TeamWithMembers> {
    await this.teams.setPlans(id, plans);
    this.planLimits.entriesChanged({ kind: 'team', id });
    return this.teams.get(id);
  }
}
