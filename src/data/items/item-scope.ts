import { type CustomerPrincipal, ownerValueOf } from '../../auth';
import { ForbiddenError } from '../../common/errors';
import type { ItemMatch, OwnerScope } from '../query/data-query';
import { type Condition } from '../query/filter-operators';
import type { ItemListQuery } from '../query/data-requests';
import { orderPaths } from '../query/list-plan';
import type { AccessPlan } from '../access/access-plan';
import { refuseProtectedPaths } from '../access/protected-fields';

/** A route's `{indexName}/{indexValue}`, or none (a write by the body filter alone). */
export type ItemAddress = { indexName: string; indexValue: string } | null;

/**
 * The owner scope: a sub caller's own items (the owner field holds its account id); root and team
 * callers: none. What is per owner by definition (uniqueField claims, a sub key's files) takes its
 * scope from here; what a caller may read is its access plan's
 * (src/data/access/access-plan.ts, readMatchOf).
 */
export function ownerScopeOf(principal: CustomerPrincipal, ownerField: string): OwnerScope | null {
  // A publishable key reads through the collection's public.read rule (its access plan); where a
  // path still takes this owner scope, it is confined to no item (`_createdAt` is always a date).
  if (principal.kind === 'publishable') return { field: '_createdAt', value: '' };
  return principal.kind === 'sub' ? { field: ownerField, value: ownerValueOf(principal) } : null;
}

/** A sub key never changes the field that makes its items its own. */
export function assertOwnerFieldKept(
  principal: CustomerPrincipal,
  values: Record<string, unknown>,
  ownerField: string,
): void {
  if (principal.kind === 'sub' && Object.hasOwn(values, ownerField))
    throw new ForbiddenError(`A sub key cannot change the owner field '${ownerField}'.`);
}

/**
 * What a read selects: the access plan's read rule ANDed with the client's conditions. Every read
 * of items (an item, a list, a count, an aggregate, an explain, an export) is confined by it.
 */
export function readMatchOf(plan: AccessPlan, conditions: Condition[]): ItemMatch {
  return { scope: plan.read, conditions };
}

/** The field paths a filter's conditions name. */
export function conditionPaths(conditions: readonly Condition[]): string[] {
  return conditions.map((condition) => condition.path);
}

/**
 * 400 PROTECTED_FIELD for a list (or its explain) naming a protected field in its filter, its
 * keyset cursors (`after[x]`, `before[x]`: the sort values of the last item seen), its sort or
 * its `fields`.
 */
export function refuseProtectedListPaths(plan: AccessPlan, query: ItemListQuery): void {
  if (plan.protectedFields.length === 0) return;
  refuseProtectedPaths(plan, conditionPaths(query.conditions), 'filter');
  for (const side of ['after', 'before'] as const)
    if (query.plan[side])
      for (const path of orderPaths(query.plan))
        refuseProtectedPaths(plan, [path], `${side}[${path}]`);
  refuseProtectedPaths(
    plan,
    query.plan.sort.map((key) => key.path),
    'sort',
  );
  if (query.projection) refuseProtectedPaths(plan, query.projection.paths, 'fields');
}
