import { ValidationFailedError, type FieldError } from '../errors';

/** Names that would reach an object's prototype machinery; refused anywhere in a body. */
const PROTOTYPE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

export interface RawJsonBudget {
  /** Deepest nesting below the body itself (the body's members are level 1). */
  maxDepth: number;
  /** Object keys plus array entries, all levels together. */
  maxNodes: number;
}

/**
 * First look at a parsed JSON request body, before any recursive code (class-transformer, the
 * validation pipe) walks it: refuses prototype keys wherever they are (400 naming each path) and
 * bodies nested or sized beyond the budget. Iterative, so hostile nesting cannot exhaust the
 * call stack. Module validators apply their own, stricter rules afterwards.
 */
export function guardRawJson(body: unknown, budget: RawJsonBudget): void {
  if (typeof body !== 'object' || body === null) return;
  const errors: FieldError[] = [];
  let nodes = 0;
  const stack: { value: unknown; depth: number; path: string }[] = [
    { value: body, depth: 0, path: '' },
  ];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop() as (typeof stack)[number];
    if (typeof value !== 'object' || value === null) continue;
    if (depth > budget.maxDepth) {
      throw new ValidationFailedError([
        { field: path, message: `is nested deeper than ${budget.maxDepth} levels` },
      ]);
    }
    const keys = Object.keys(value);
    nodes += keys.length;
    if (nodes > budget.maxNodes) {
      throw new ValidationFailedError([
        { field: 'body', message: `has more than ${budget.maxNodes} values and keys` },
      ]);
    }
    const isArray = Array.isArray(value);
    for (const key of keys) {
      const childPath = isArray ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      if (!isArray && PROTOTYPE_NAMES.has(key)) {
        errors.push({ field: childPath, message: `field name '${key}' is a reserved name` });
        continue;
      }
      stack.push({
        value: (value as Record<string, unknown>)[key],
        depth: depth + 1,
        path: childPath,
      });
    }
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
}
