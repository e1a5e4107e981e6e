import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';
import type { PlanLimitName } from './plan-limits';

/** The codes plans owns. */
export const PLANS_ERRORS = defineErrors({
  PLAN_NOT_FOUND: {
    status: HttpStatus.NOT_FOUND,
    title: 'No plan of that name in the catalogue',
  },
  PLAN_LIMIT_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: 'The write would take the tenant past a limit of its plan',
  },
  PLAN_IN_USE: {
    status: HttpStatus.CONFLICT,
    title: 'The plan is held by users or teams',
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

export class PlanNotFoundError extends DomainError {
  constructor(name: string) {
    super(PLANS_ERRORS.PLAN_NOT_FOUND, `No plan named ${name} in the catalogue.`);
  }
}

/**
 * DELETE of a plan that users or teams hold (docs/plans.md, "Deleting a plan"): the problem says
 * how many of each, so the operator knows what to move first.
 */
export class PlanInUseError extends DomainError {
  constructor(name: string, holders: { profiles: number; teams: number }) {
    super(
      PLANS_ERRORS.PLAN_IN_USE,
      `The plan ${name} is held by ${holders.profiles} user(s) and ${holders.teams} team(s) (an entry that has not ended). Change their plans first.`,
      undefined,
      { profiles: holders.profiles, teams: holders.teams },
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
