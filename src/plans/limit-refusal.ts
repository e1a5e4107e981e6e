import type { DomainError } from '../common/errors';
import type { PlanLimitName } from './plan-limits';
import { PlanLimitExceededError, type LimitMembers } from './plans.errors';
import type { ActiveLimits } from './tenant-limits';

/**
 * The refusal of a write that would take a tenant past one of its limits: PLAN_LIMIT_EXCEEDED
 * under an active plan; without one, the deployment's own error for that limit (`deployment`),
 * whose code stays what clients know, with the same members and `plan: null`.
 */
export function limitRefusal(
  active: ActiveLimits,
  at: { limit: PlanLimitName; max: number; usage: number },
  deployment: (members: LimitMembers) => DomainError,
): DomainError {
  if (active.plan !== null)
    return new PlanLimitExceededError(at.limit, at.max, at.usage, active.plan.name);
  return deployment({ ...at, plan: null });
}
