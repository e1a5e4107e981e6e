export { PlansModule } from './plans.module';
export { TenantLimits, type ActiveLimits, type ActivePlan } from './tenant-limits';
export {
  PLAN_LIMIT_MAX,
  PLAN_LIMIT_NAMES,
  PLAN_NAME_PATTERN,
  deploymentLimits,
  limitsUnder,
  type LimitValues,
  type PlanLimitName,
  type PlanLimits,
} from './plan-limits';
export type { PlanEntry } from './plan-entry';
export type { PlanHolders } from './plan-holders.port';
export { PlanCatalogue, planTag } from './plan-catalogue.service';
export { PlanLimitsCache } from './plan-limits-cache';
export type { Plan, PlanContent } from './plan.repository';
export {
  PLANS_ERRORS,
  PlanInUseError,
  PlanLimitExceededError,
  PlanNotFoundError,
  type LimitMembers,
} from './plans.errors';
export { limitRefusal } from './limit-refusal';
