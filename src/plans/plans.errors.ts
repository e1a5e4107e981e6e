import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';
import type { PlanLimitName } from './plan-limits';

/** The codes plans owns. */
export const PLANS_ERRORS = defineErrors({
  PLAN_LIMIT_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: 'The write would take the tenant past a limit of its plan',
  },
});

/**
 * A write refused because it would take the tenant past a limit of its active plan. The problem
 * names the limit, its value (`max`), the usage before the write and the plan.
 */
export class PlanLimitExceededError extends DomainError {
  constructor(limit: PlanLimitName, max: number, usage: number, plan: string) {
    super(
      PLANS_ERRORS.PLAN_LIMIT_EXCEEDED,
      `The plan ${plan} allows ${max} ${limit}; ${usage} are used. Delete some, or ask for a larger plan.`,
      undefined,
      { limit, max, usage, plan },
    );
  }
}

/**
 * What every refusal at a limit says besides its code: which limit, its value, the usage before
 * the write and the plan it comes from (null: the deployment's setting). The deployment's own
 * codes (COLLECTION_QUOTA_EXCEEDED, …) carry the same members as PLAN_LIMIT_EXCEEDED.
 */
export interface LimitMembers {
  limit: PlanLimitName;
  max: number;
  usage: number;
  plan: string | null;
}
