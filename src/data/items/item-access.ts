import type { Document } from 'mongodb';
import type { AccessPlan, ItemScope } from '../access/access-plan';
import {
  protectedPathOf,
  refuseProtectedPaths,
  refuseProtectedWrites,
} from '../access/protected-fields';
import { AccessRuleError, DuplicateItemError } from '../data.errors';
import type { NativeCollection } from '../storage/tenant-storage';
import type { ItemsRepository } from './items.repository';
import { pathCondition, type ItemMatch, type MatchScope } from '../query/data-query';
import type { Condition } from '../query/filter-operators';
import type { SchemaError } from '../rules/schema/item-schemas';

/**
 * How the write paths apply an access plan (src/data/access/access-plan.ts): an item outside the
 * read rule is missing (404); one the operation's rule does not hold before, or for a create or
 * an update after, is refused (403 ACCESS_RULE); a protected field is neither set nor answered.
 */

/** Both scopes at once (null: every item). */
export function bothScopes(a: MatchScope | null, b: MatchScope | null): MatchScope | null {
  if (!a?.filter) return b?.filter ? { filter: b.filter } : null;
  if (!b?.filter) return { filter: a.filter };
  if (a === b || JSON.stringify(a.filter) === JSON.stringify(b.filter)) return { filter: a.filter };
  return { filter: { $and: [a.filter, b.filter] } };
}

/** 403 ACCESS_RULE: the item before or after the write is outside the operation's rule. */
export function outsideRule(operation: 'create' | 'update' | 'delete'): AccessRuleError {
  return new AccessRuleError(
    `The collection's access rules do not let this key ${operation} this item${operation === 'delete' ? '' : ' as it would be'}.`,
  );
}

/** Every field path a filter names (through `$and`, `$or`, `$nor`). */
function filterPaths(filter: Document, into: Set<string>): Set<string> {
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$')) {
      if (Array.isArray(value))
        for (const part of value as unknown[])
          if (part !== null && typeof part === 'object') filterPaths(part, into);
    } else into.add(key);
  }
  return into;
}

function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

/**
 * Whether a write of `paths` can change what `scope` says of an item: only when it writes a
 * field the rule's filter names (an update also writes `_updatedAt`). When it cannot, the item
 * after is inside the rule exactly when the item before is, and the rule is simply ANDed into
 * the one conditional write.
 */
export function ruleSeesWrite(scope: ItemScope, paths: readonly string[]): boolean {
  if (scope.filter === null || scope.none) return false;
  const named = filterPaths(scope.filter, new Set());
  return [...paths, '_updatedAt'].some((path) => [...named].some((n) => overlaps(path, n)));
}

/** Every field path an item holds (through objects and arrays of objects), leaves and objects. */
function itemPaths(value: unknown, prefix: string, into: string[]): string[] {
  if (Array.isArray(value)) {
    for (const element of value) itemPaths(element, prefix, into);
    return into;
  }
  if (value === null || typeof value !== 'object' || value instanceof Date) return into;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    into.push(path);
    itemPaths(child, path, into);
  }
  return into;
}

/** 403 ACCESS_RULE when a new item holds a protected field (anywhere on its path). */
export function refuseProtectedItem(plan: AccessPlan, item: Record<string, unknown>): void {
  if (plan.protectedFields.length === 0) return;
  const paths = itemPaths(item, '', []).filter((path) =>
    plan.protectedFields.some((hidden) => path === hidden || path.startsWith(`${hidden}.`)),
  );
  refuseProtectedWrites(plan, paths);
}

/** The `warn` schema's warnings the caller may see: none about a protected path. */
export function visibleWarnings(plan: AccessPlan, warnings: SchemaError[]): SchemaError[] {
  if (plan.protectedFields.length === 0) return warnings;
  return warnings.filter((warning) => {
    const path = warning.pointer
      .split('/')
      .slice(1)
      .filter((segment) => !/^\d+$/.test(segment))
      .join('.');
    return path === '' || protectedPathOf(plan, path) === null;
  });
}

/**
 * What a write selects: the read rule (outside it an item is missing), the address, the filter.
 * A write selecting by a protected field would tell its value by what it answers (404, 409
 * AMBIGUOUS_MATCH, how many it changed): 400 PROTECTED_FIELD, as for a list.
 */
export function addressedMatch(
  plan: AccessPlan,
  address: { indexName: string; indexValue: string } | null,
  conditions: Condition[],
): ItemMatch {
  if (address) refuseProtectedPaths(plan, [address.indexName], 'indexName');
  refuseProtectedPaths(
    plan,
    conditions.map((condition) => condition.path),
    'filter',
  );
  const path = address ? [pathCondition(address.indexName, address.indexValue)] : [];
  return { scope: matchScopeOf(plan.read), conditions: [...path, ...conditions] };
}

/** Whether `scope` selects no item that `read` does not (the same filter, or every item). */
export function sameAsRead(read: ItemScope, scope: ItemScope): boolean {
  return (
    scope.filter === null ||
    scope === read ||
    (!scope.none && JSON.stringify(scope.filter) === JSON.stringify(read.filter))
  );
}

/** The item as an update leaves it, as the rules judge it (dates as dates, updated now). */
export function updatedImage(after: Record<string, unknown>, now: Date): Record<string, unknown> {
  return { ...after, _updatedAt: now };
}

/** A rule's filter as a query's scope (null: every item). */
export function matchScopeOf(scope: ItemScope): MatchScope | null {
  return scope.filter === null ? null : { filter: scope.filter };
}

/**
 * 409 for a value `existingId` holds, naming it only when the caller may read it. The 409 itself
 * tells no more than uniqueness tells any writer (this `_id`, or this uniqueField value among the
 * caller's own items, is taken); the id of an item outside the read rule would tell which item,
 * so it is left out.
 */
export async function takenError(
  items: ItemsRepository,
  target: NativeCollection,
  plan: AccessPlan,
  field: string,
  existingId: string,
): Promise<DuplicateItemError> {
  if (plan.read.filter === null) return DuplicateItemError.taken(field, existingId);
  const [readable] = await items.findMatching(
    target,
    {
      scope: matchScopeOf(plan.read),
      conditions: [{ kind: 'eq', path: '_id', anyOf: [existingId] }],
    },
    1,
  );
  return readable
    ? DuplicateItemError.taken(field, existingId)
    : new DuplicateItemError(`An item with this ${field} exists already.`);
}
