import { Inject, Injectable } from '@nestjs/common';
import { PreconditionFailedError } from '../common/errors';
import { formatETag, ifMatchHolds, type IfMatch } from '../common/http/etag';
import { DUPLICATE } from '../common/mongo/duplicate';
import { KeyedLock } from '../common/mongo/keyed-lock';
import { PLAN_HOLDERS, type PlanHolders } from './plan-holders.port';
import { PlanRepository, type Plan, type PlanContent } from './plan.repository';
import { PlanInUseError, PlanNotFoundError } from './plans.errors';
import { PlanLimitsCache } from './plan-limits-cache';

/** The ETag of a plan: `"plan-<version>"`; null when there is no plan. */
export function planTag(plan: Pick<Plan, 'version'> | null): string | null {
  return plan ? formatETag(`plan-${plan.version}`) : null;
}

/** Attempts of an unconditional write that keeps meeting another instance's write of the plan. */
const UNCONDITIONAL_ATTEMPTS = 5;

/**
 * The plan catalogue (operator API; docs/plans.md): plans by name with their limits. A write is
 * made on the condition that the plan is still the version read: writes of one plan are queued
 * in this process, and the database's filtered update decides between instances (exact on
 * MongoDB; FerretDB does not re-check the filter at write time, docs/requests.md, "Conditional requests").
 * This instance's limits see a change at once, the others' within PLAN_CACHE_MS.
 */
@Injectable()
export class PlanCatalogue {
  private readonly queue = new KeyedLock();

  constructor(
    private readonly plans: PlanRepository,
    @Inject(PLAN_HOLDERS) private readonly holders: PlanHolders,
    private readonly cache: PlanLimitsCache,
  ) {}

  list(): Promise<Plan[]> {
    return this.plans.list();
  }

  /** The plan; 404 PLAN_NOT_FOUND without one. */
  async get(name: string): Promise<Plan> {
    const plan = await this.plans.find(name);
    if (!plan) throw new PlanNotFoundError(name);
    return plan;
  }

  /**
   * Creates the plan or replaces it, if If-Match holds (absent: whatever is stored; `*`: only a
   * plan that exists; a tag: only that version). `created` tells which it was.
   */
  put(
    name: string,
    content: PlanContent,
    ifMatch: IfMatch,
  ): Promise<{ plan: Plan; created: boolean }> {
    return this.queue.run(name, async () => {
      for (let attempt = 1; ; attempt++) {
        const current = await this.plans.find(name);
        const tag = planTag(current);
        if (!ifMatchHolds(ifMatch, tag)) throw new PreconditionFailedError(tag);
        const written = current
          ? await this.plans.replace(name, current.version, content)
          : await this.plans.insert(name, content);
        if (written !== null && written !== DUPLICATE) {
          this.cache.catalogueChanged();
          return { plan: written, created: current === null };
        }
        // Another instance wrote the plan since it was read: a conditional write has lost.
        if (ifMatch.kind !== 'absent' || attempt === UNCONDITIONAL_ATTEMPTS)
          throw new PreconditionFailedError(planTag(await this.plans.find(name)));
      }
    });
  }

  /**
   * Deletes the plan, if If-Match holds and no user or team holds it (409 PLAN_IN_USE naming how
   * many do). Entries that ended may go on naming it: a deleted plan gives nobody limits.
   */
  remove(name: string, ifMatch: IfMatch): Promise<void> {
    return this.queue.run(name, async () => {
      const current = await this.plans.find(name);
      if (!current) throw new PlanNotFoundError(name);
      const tag = planTag(current);
      if (!ifMatchHolds(ifMatch, tag)) throw new PreconditionFailedError(tag);
      const holders = await this.holders.holdersOf(name, new Date());
      if (holders.profiles > 0 || holders.teams > 0) throw new PlanInUseError(name, holders);
      if (!(await this.plans.delete(name, current.version)))
        throw new PreconditionFailedError(planTag(await this.plans.find(name)));
      this.cache.catalogueChanged();
    });
  }
}
