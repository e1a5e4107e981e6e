import { type CustomerPrincipal, ownerValueOf } from '../../auth';
import { ForbiddenError } from '../../common/errors';
import {
  ownerMatchScope,
  pathCondition,
  type ItemMatch,
  type OwnerScope,
} from '../query/data-query';
import { type Condition } from '../query/filter-operators';

/** A route's `{indexName}/{indexValue}`, or none (a write by the body filter alone). */
export type ItemAddress = { indexName: string; indexValue: string } | null;

/**
 * The owner scope: a sub caller is confined to the items whose owner field holds its own account
 * id; root and team callers see the whole namespace. Every read, write, analysis and export of
 * items takes its scope from here.
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

/** What a write selects: the owner scope, the route's address and the body filter's conditions. */
export function itemMatchOf(
  principal: CustomerPrincipal,
  ownerField: string,
  address: ItemAddress,
  conditions: Condition[],
): ItemMatch {
  const path = address ? [pathCondition(address.indexName, address.indexValue)] : [];
  return {
    scope: ownerMatchScope(ownerScopeOf(principal, ownerField)),
    conditions: [...path, ...conditions],
  };
}
