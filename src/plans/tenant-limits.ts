import type { Tenant } from '../common/tenancy/namespace';
import type { LimitValues } from './plan-limits';

/** The plan entry that is active for a tenant: its name and dates (`until` null: never ends). */
export interface ActivePlan {
  name: string;
  since: Date;
  until: Date | null;
}

/** The limits that apply to a tenant now, and the plan they come from (null: the deployment's). */
export interface ActiveLimits {
  plan: ActivePlan | null;
  limits: LimitValues;
}

/**
 * The limits of a tenant, as every limit check reads them. Injected by this class: the plans
 * module provides it. A change of plan takes effect within the bound it documents, without a
 * database read per request.
 */
export abstract class TenantLimits {
  abstract of(tenant: Tenant): Promise<ActiveLimits>;
}
