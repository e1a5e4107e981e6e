import { ValidationFailedError, type FieldError } from '../common/errors';

/**
 * The one validator for client-supplied JSON of the data API (items, values, filters, field
 * names). Every budget is checked while walking, before any other code looks at the input, and
 * the walk is iterative (an explicit stack), so hostile nesting cannot exhaust the call stack.
 *
 * Accepted input is copied into fresh plain objects and arrays, and every copy is remembered: the
 * repository only accepts values that came out of this module (see `Guarded`).
 */

export interface JsonBudget {
  /** Nesting depth; the top-level object is depth 1. */
  maxDepth: number;
  /** Object keys plus values (every node of the tree). */
  maxNodes: number;
  /** Characters of all strings and keys together. */
  maxChars: number;
}

export const DEFAULT_BUDGET: JsonBudget = { maxDepth: 20, maxNodes: 100_000, maxChars: 4_000_000 };

/** The budget of data request bodies: configured depth, body size as the character budget. */
export function dataBudget(limits: { dataMaxDepth: number; bodyBytes: number }): JsonBudget {
  return { maxDepth: limits.dataMaxDepth, maxNodes: 100_000, maxChars: limits.bodyBytes };
}

/** Longest field name or dotted path accepted. */
export const MAX_FIELD_NAME_LENGTH = 256;

const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype', '_bsontype']);

declare const guardedBrand: unique symbol;
/** A value produced by this module: validated and copied. */
export type Guarded<T> = T & { readonly [guardedBrand]: true };

export type JsonScalar = string | number | boolean | null;
export type JsonObject = Record<string, unknown>;

const guardedValues = new WeakSet<object>();

function mark<T extends object>(value: T): Guarded<T> {
  guardedValues.add(value);
  return value as Guarded<T>;
}

/** Whether an object was produced by this module (used by tests and the repository's checks). */
export function isGuarded(value: unknown): boolean {
  return typeof value === 'object' && value !== null && guardedValues.has(value);
}

export function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export function isScalar(value: unknown): value is JsonScalar {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

/** Why a single field name (one segment, no dots) is not acceptable, or null when it is. */
export function fieldNameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_FIELD_NAME_LENGTH)
    return `must be at most ${MAX_FIELD_NAME_LENGTH} characters`;
  if (name.startsWith('$')) return "must not start with '$'";
  if (name.includes('.')) return "must not contain '.'";
  if (name.includes('\0')) return 'must not contain NUL';
  if (FORBIDDEN_NAMES.has(name)) return `'${name}' is a reserved name`;
  return null;
}

/** Why a dotted path (filter and sort keys, index fields) is not acceptable, or null. */
export function fieldPathProblem(path: string): string | null {
  if (path.length === 0) return 'must not be empty';
  if (path.length > MAX_FIELD_NAME_LENGTH)
    return `must be at most ${MAX_FIELD_NAME_LENGTH} characters`;
  for (const segment of path.split('.')) {
    const problem = fieldNameProblem(segment);
    if (problem) return `segment '${segment}' ${problem}`;
  }
  return null;
}

function fail(field: string, message: string): never {
  throw new ValidationFailedError([{ field, message }]);
}

/** A field name given as a parameter (authField, uniqueField, values keys). */
export function guardFieldName(value: unknown, field: string): string {
  if (typeof value !== 'string') fail(field, 'must be a string');
  const problem = fieldNameProblem(value);
  if (problem) fail(field, problem);
  return value;
}

/** A dotted path given as a parameter (filter and sort keys, index fields). */
export function guardFieldPath(value: unknown, field: string): string {
  if (typeof value !== 'string') fail(field, 'must be a string');
  const problem = fieldPathProblem(value);
  if (problem) fail(field, problem);
  return value;
}

interface Frame {
  source: unknown;
  target: JsonObject | unknown[];
  key: string | number;
  depth: number;
  path: string;
}

/**
 * Validates and copies a JSON object whose keys are field names (an item, or `values`).
 * Collects every key problem it meets; budget overruns stop the walk at once.
 */
export function guardDocument(
  value: unknown,
  field: string,
  budget: JsonBudget = DEFAULT_BUDGET,
): Guarded<JsonObject> {
  if (!isPlainObject(value)) fail(field, 'must be a JSON object');
  const errors: FieldError[] = [];
  let nodes = 0;
  let chars = 0;
  // Each frame copies one source value into target[key]; containers push their children.
  const holder: JsonObject = {};
  const stack: Frame[] = [{ source: value, target: holder, key: 'root', depth: 1, path: field }];

  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const { source, depth, path } = frame;
    nodes += 1;
    if (nodes > budget.maxNodes) fail(field, `has more than ${budget.maxNodes} values and keys`);

    let copy: unknown;
    if (Array.isArray(source) || isPlainObject(source)) {
      if (depth > budget.maxDepth) fail(path, `is nested deeper than ${budget.maxDepth} levels`);
      if (Array.isArray(source)) {
        const array: unknown[] = new Array<unknown>(source.length);
        for (let i = source.length - 1; i >= 0; i -= 1) {
          stack.push({
            source: source[i],
            target: array,
            key: i,
            depth: depth + 1,
            path: `${path}[${i}]`,
          });
        }
        copy = array;
      } else {
        const object: JsonObject = {};
        // Object.keys lists own properties, so a JSON "__proto__" key is seen here and refused.
        for (const key of Object.keys(source)) {
          nodes += 1;
          chars += key.length;
          const childPath = `${path}.${key}`;
          const problem = fieldNameProblem(key);
          if (problem) {
            errors.push({ field: childPath, message: `field name ${problem}` });
            continue;
          }
          stack.push({
            source: source[key],
            target: object,
            key,
            depth: depth + 1,
            path: childPath,
          });
        }
        copy = object;
      }
    } else if (typeof source === 'string') {
      chars += source.length;
      copy = source;
    } else if (isScalar(source)) {
      copy = source;
    } else {
      errors.push({ field: path, message: 'is not a JSON value' });
      continue;
    }
    if (chars > budget.maxChars) fail(field, `has more than ${budget.maxChars} characters`);
    if (Array.isArray(frame.target)) frame.target[frame.key as number] = copy;
    else frame.target[frame.key as string] = copy;
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return mark(holder.root as JsonObject);
}

/**
 * Validates and copies an equality filter: keys are dotted paths, values scalars only (objects
 * and arrays would be operators or structural matches), so no `$` operator can get through.
 */
export function guardFilter(value: unknown, field: string): Guarded<Record<string, JsonScalar>> {
  if (!isPlainObject(value)) fail(field, 'must be a JSON object');
  const errors: FieldError[] = [];
  const copy: Record<string, JsonScalar> = {};
  const keys = Object.keys(value);
  if (keys.length > 100) fail(field, 'has more than 100 fields');
  for (const key of keys) {
    const problem = fieldPathProblem(key);
    const entry = value[key];
    if (problem) errors.push({ field: `${field}.${key}`, message: `field path ${problem}` });
    else if (!isScalar(entry))
      errors.push({
        field: `${field}.${key}`,
        message: 'must be a string, number, boolean or null (equality only)',
      });
    else copy[key] = entry;
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return mark(copy);
}
