import { ProtectedFieldError, AccessRuleError } from '../data.errors';
import type { AccessPlan } from './access-plan';

/**
 * Protected fields (docs/data.md, "Access rules"): left out of everything a sub or publishable
 * caller receives, and refused wherever naming one could tell its value — a filter, sort,
 * projection, cursor, aggregate field or index route on the field, inside it, or on an object
 * that holds it.
 */

/** The protected path `path` reaches (equal, inside it, or holding it); null when none. */
export function protectedPathOf(plan: AccessPlan, path: string): string | null {
  for (const hidden of plan.protectedFields)
    if (path === hidden || path.startsWith(`${hidden}.`) || hidden.startsWith(`${path}.`))
      return hidden;
  return null;
}

/**
 * 400 PROTECTED_FIELD when any of `paths` reaches a protected field; `field` names the request
 * member (`filter`, `sort`, `fields`, `after[...]`, …) in the problem.
 */
export function refuseProtectedPaths(
  plan: AccessPlan,
  paths: Iterable<string>,
  field: string,
): void {
  if (plan.protectedFields.length === 0) return;
  for (const path of paths) {
    const hidden = protectedPathOf(plan, path);
    if (hidden !== null) throw new ProtectedFieldError(field, path);
  }
}

/** 403 ACCESS_RULE when a write's values (field paths → values) set a protected field. */
export function refuseProtectedWrites(plan: AccessPlan, paths: Iterable<string>): void {
  if (plan.protectedFields.length === 0) return;
  for (const path of paths)
    if (protectedPathOf(plan, path) !== null)
      throw new AccessRuleError(`This key may not set the protected field '${path}'.`);
}

function withoutPath(value: unknown, segments: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((element) => withoutPath(element, segments));
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const [head, ...rest] = segments as [string, ...string[]];
  const record = value as Record<string, unknown>;
  if (!Object.hasOwn(record, head)) return value;
  const copy = { ...record };
  if (rest.length === 0) delete copy[head];
  else copy[head] = withoutPath(copy[head], rest);
  return copy;
}

/**
 * The item (or an item image: an event's data, a `prior`) without the caller's protected fields,
 * through arrays of objects as MongoDB paths go; the item itself when nothing is protected.
 */
export function withoutProtected<T extends Record<string, unknown>>(plan: AccessPlan, item: T): T {
  let result: unknown = item;
  for (const hidden of plan.protectedFields) result = withoutPath(result, hidden.split('.'));
  return result as T;
}
