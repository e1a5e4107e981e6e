import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Tenant } from './common/tenancy/namespace';
import type { PlanEntry, PlanHolders } from './plans';
import { ProfileService, type Plan } from './profile';
import { TeamService } from './team';

function entryOf(plan: Plan): PlanEntry {
  return { planName: plan.planName, since: plan.since, until: plan.until };
}

/**
 * The plans port, answered by the modules that own users and teams: a user's plans are on its
 * root profile (its sub profiles and keys use them), a team's on the team (its key and members
 * acting for it use them).
 *
 * The two services are looked up when first asked, not injected: they depend (through data's
 * collections and webhooks, which read limits) on TenantLimits, which depends on this port, so
 * injected they and TenantLimits would each wait for the other to be built and the application
 * would never start. By the first request every provider is built.
 */
@Injectable()
export class ProfileAndTeamPlanHolders implements PlanHolders {
  constructor(private readonly modules: ModuleRef) {}

  private get profiles(): ProfileService {
    return this.modules.get(ProfileService, { strict: false });
  }

  private get teams(): TeamService {
    return this.modules.get(TeamService, { strict: false });
  }

  async entriesOf(tenant: Tenant): Promise<PlanEntry[]> {
    const plans =
      tenant.kind === 'user'
        ? await this.profiles.plansOf(tenant.id)
        : await this.teams.plansOf(tenant.id);
    return plans.map(entryOf);
  }

  async holdersOf(planName: string, now: Date): Promise<{ profiles: number; teams: number }> {
    const [profiles, teams] = await Promise.all([
      this.profiles.countHoldingPlan(planName, now),
      this.teams.countHoldingPlan(planName, now),
    ]);
    return { profiles, teams };
  }
}
