import type { FieldError } from '../common/errors';

/**
 * The rules for the free-form JSON of profiles: settings, metadata, userMetadata and plan
 * metadata. Pure and self-contained so it can run on the raw request body before any other code
 * (class-transformer, the merge, mongoose) walks the input: it never descends deeper than the
 * depth budget, so a hostile body cannot exhaust the stack.
 */

export interface ProfileJsonLimits {
  /** Largest serialized size (UTF-8 bytes of JSON.stringify) of one object. */
  maxBytes: number;
  /** Deepest nesting; the object itself is level 1, an object inside it level 2, … */
  maxDepth: number;
}

export interface ProfileJsonRules extends ProfileJsonLimits {
  /** 'json': object, string, integer or boolean. 'string': strings only (metadata, flat). */
  values: 'json' | 'string';
  /** A merge patch (RFC 7386): `null` is allowed at every level and means "remove this key". */
  patch: boolean;
}

/** Keys that would reach an object's prototype when assigned in JavaScript. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether a key would reach an object's prototype when assigned in JavaScript. */
export function isPrototypeKey(key: string): boolean {
  return PROTOTYPE_KEYS.has(key);
}

/** A response should stay readable even when a body breaks the rules thousands of times. */
export const MAX_REPORTED_ERRORS = 50;

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `settings.a.b` for plain keys, `settings["a.b"]` for keys that would read ambiguously. */
export function childPath(parent: string, key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** Why a key is refused, or null when it is fine. */
export function keyProblem(key: string): string | null {
  if (key.length === 0) return 'keys must not be empty';
  if (key.startsWith('$')) return "keys must not start with '$'";
  if (key.includes('.')) return "keys must not contain '.'";
  if (key.includes('\0')) return 'keys must not contain NUL characters';
  if (PROTOTYPE_KEYS.has(key)) return `'${key}' is a reserved key`;
  return null;
}

function valueProblem(value: unknown, rules: ProfileJsonRules): string | null {
  switch (typeof value) {
    case 'string':
      return null;
    case 'boolean':
      return rules.values === 'string' ? 'values must be strings' : null;
    case 'number':
      if (rules.values === 'string') return 'values must be strings';
      if (!Number.isInteger(value)) return 'numbers must be integers';
      if (!Number.isSafeInteger(value)) return 'integers must be within ±(2^53 - 1)';
      return null;
    case 'object':
      if (value === null) return rules.patch ? null : 'null is only allowed in updates';
      if (Array.isArray(value)) {
        return rules.values === 'string'
          ? 'values must be strings'
          : 'arrays are not allowed (values are objects, strings, integers or booleans)';
      }
      return rules.values === 'string' ? 'values must be strings' : null;
    case 'undefined':
    case 'bigint':
    case 'symbol':
    case 'function':
      return 'not a JSON value';
  }
}

/**
 * Checks one free-form object against the rules and lists every offending path (capped at
 * MAX_REPORTED_ERRORS). An empty list means the value is a plain object within every budget.
 */
export function validateProfileJson(
  value: unknown,
  rules: ProfileJsonRules,
  path: string,
): FieldError[] {
  if (!isJsonObject(value)) return [{ field: path, message: 'must be a JSON object' }];
  const errors: FieldError[] = [];
  let tooDeep = false;
  const report = (field: string, message: string): void => {
    if (errors.length < MAX_REPORTED_ERRORS) errors.push({ field, message });
  };
  // Explicit stack instead of recursion: depth is bounded anyway, but this keeps the walk flat.
  const stack: { object: Record<string, unknown>; path: string; depth: number }[] = [
    { object: value, path, depth: 1 },
  ];
  while (stack.length > 0) {
    const { object, path: at, depth } = stack.pop()!;
    for (const key of Object.keys(object)) {
      const keyPath = childPath(at, key);
      const badKey = keyProblem(key);
      if (badKey) report(keyPath, badKey);
      const child = object[key];
      const badValue = valueProblem(child, rules);
      if (badValue) {
        report(keyPath, badValue);
      } else if (isJsonObject(child)) {
        if (depth + 1 > rules.maxDepth) {
          if (!tooDeep) report(keyPath, `nesting deeper than ${rules.maxDepth} levels`);
          tooDeep = true;
        } else {
          stack.push({ object: child, path: keyPath, depth: depth + 1 });
        }
      }
    }
  }
  if (errors.length === 0) errors.push(...sizeErrors(value, rules.maxBytes, path));
  return errors;
}

/** UTF-8 bytes of the value's JSON text. */
export function serializedSize(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** The size budget alone; used again on the result of a merge. */
export function sizeErrors(value: unknown, maxBytes: number, path: string): FieldError[] {
  const size = serializedSize(value);
  return size > maxBytes
    ? [{ field: path, message: `is ${size} bytes serialized; the limit is ${maxBytes}` }]
    : [];
}
