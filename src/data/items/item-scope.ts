import { type CustomerPrincipal, ownerValueOf } from '../../auth';
import { ForbiddenError } from '../../common/errors';
import type { OwnerScope } from '../query/data-query';

/** Sub callers are confined to their own items; root and team callers see the namespace. */
export function ownerScopeOf(principal: CustomerPrincipal, ownerField: string): OwnerScope | null {
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
