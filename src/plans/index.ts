export { PlansModule } from './plans.module';
export { TenantLimits, type ActiveLimits, type ActivePlan } from './tenant-limits';
export {
  PLAN_LIMIT_NAMES,
  deploymentLimits,
  limitsUnder,
  type LimitValues,
  type PlanLimitName,
  type PlanLimits,
} from './plan-limits';
export { PLANS_ERRORS, PlanLimitExceededError, type LimitMembers } from './plans.errors';
export { limitRefusal } from './limit-refusal';
