import type { Tenant } from '../common/tenancy/namespace';
import type { PlanEntry } from './plan-entry';

/**
 * What plans needs to know of the users and teams that hold plans: their entries, and how many
 * hold a plan. Plans declares the port and the composition root (AppModule) binds it to the
 * modules that own profiles and teams, so plans depends on no feature module.
 */
export interface PlanHolders {
  /** A tenant's entries: a user's root profile's, or a team's; [] when it has none or is gone. */
  entriesOf(tenant: Tenant): Promise<PlanEntry[]>;
  /**
   * How many users (root profiles) and teams hold the plan at `now`: have an entry naming it
   * that has not ended (docs/plans.md, "Deleting a plan").
   */
  holdersOf(planName: string, now: Date): Promise<{ profiles: number; teams: number }>;
}

export const PLAN_HOLDERS = Symbol('PlanHolders');
