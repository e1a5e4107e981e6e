import { ValidationFailedError, type FieldError } from '../errors';
import { isPlainObject, serializedSize, type JsonObject } from './json';

/**
 * The one validator for client-supplied JSON: request bodies at the validation pipe, data items,
 * values and filters, profile settings and metadata. Callers configure it with rules (which keys
 * and values are refused, with their wording) and budgets; it walks the input iteratively (an
 * explicit stack, so hostile nesting cannot exhaust the call stack), lists the problems in
 * document order, and returns a copy built from fresh plain objects and arrays that remembers
 * it came from here (`isGuarded`).
 */

export interface JsonBudget {
  /** Nesting depth of objects and arrays; the value itself is level `rootDepth`. */
  maxDepth: number;
  /** Keys plus values, every node of the tree; beyond it the walk ends. */
  maxNodes?: number;
  /** Characters of all keys and strings together; beyond it the walk ends. */
  maxChars?: number;
  /** Keys of any one object; beyond it the walk ends. */
  maxKeys?: number;
  /** UTF-8 bytes of the JSON text, measured once nothing else is wrong. */
  maxBytes?: number;
}

export interface JsonRules {
  /** Why an object key is refused, or null. The value under a refused key is still checked. */
  key(key: string): string | null;
  /** Why a value below the root is refused, or null; accepted arrays and plain objects are walked. */
  value(value: unknown): string | null;
  budget: JsonBudget;
  /** 'object' (default): the value must be a JSON object. 'any': a request body of any shape. */
  root?: 'object' | 'any';
  /** Level of the value itself: 1 (default), or 0 for a request body whose members are level 1. */
  rootDepth?: number;
  /** 'dotted' (default): `a.b[0]`. 'quoted': `a["b.c"]` for keys that would read ambiguously. */
  paths?: 'dotted' | 'quoted';
  /** Problems listed at most (default: all). */
  maxErrors?: number;
  /** Wording of the depth overrun, which is reported once and skips what lies below. */
  tooDeep?: (maxDepth: number) => string;
  /**
   * false: only check, and answer the value itself (not branded as guarded), for a caller that
   * hands it to a stricter guard which copies it anyway. Default true.
   */
  copy?: boolean;
}

declare const guardedBrand: unique symbol;
/** A value produced by the validator: checked and copied. */
export type Guarded<T> = T & { readonly [guardedBrand]: true };

export type JsonCheck = { ok: true; value: unknown } | { ok: false; errors: FieldError[] };

const guardedValues = new WeakSet<object>();

/** Whether an object was produced by the validator. */
export function isGuarded(value: unknown): boolean {
  return typeof value === 'object' && value !== null && guardedValues.has(value);
}

/** A JSON value anywhere: scalars with finite numbers, arrays and plain objects. */
export function jsonValueProblem(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(value) ? null : 'is not a JSON value';
    case 'object':
      return value === null || Array.isArray(value) || isPlainObject(value)
        ? null
        : 'is not a JSON value';
    case 'undefined':
    case 'bigint':
    case 'symbol':
    case 'function':
      return 'is not a JSON value';
  }
}

const SIMPLE_KEY = /^[A-Za-z0-9_-]+$/;

function memberPath(parent: string, key: string, style: JsonRules['paths']): string {
  if (style === 'quoted' && !SIMPLE_KEY.test(key)) return `${parent}[${JSON.stringify(key)}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

function itemPath(parent: string, index: number): string {
  return parent === '' ? String(index) : `${parent}[${index}]`;
}

/** Assigning `__proto__` would set the copy's prototype; rules refuse it, this keeps copies safe. */
function setMember(target: JsonObject | unknown[], key: string | number, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    (target as Record<string | number, unknown>)[key] = value;
  }
}

/** A value the walk does not enter: anything but an array or a plain object. */
function isLeaf(value: unknown): boolean {
  return (
    typeof value !== 'object' || value === null || (!Array.isArray(value) && !isPlainObject(value))
  );
}

interface Frame {
  source: unknown;
  /** Where the copy goes; null below a refused key (still checked, never copied) or when only checking. */
  target: JsonObject | unknown[] | null;
  /** A string for object members, whose key is checked too. */
  key: string | number;
  depth: number;
  path: string;
}

/**
 * Checks `value` against the rules. Problems of the whole value are reported at `path`, or at
 * 'body' when `path` is '' (a request body, whose members are named without a prefix). Node,
 * character and key-count overruns end the walk and are reported alone.
 */
export function checkJson(value: unknown, rules: JsonRules, path: string): JsonCheck {
  const whole = path === '' ? 'body' : path;
  const fail = (field: string, message: string): JsonCheck => ({
    ok: false,
    errors: [{ field, message }],
  });
  if ((rules.root ?? 'object') === 'object' && !isPlainObject(value)) {
    return fail(whole, 'must be a JSON object');
  }
  const { maxDepth, maxNodes = Infinity, maxChars = Infinity, maxKeys = Infinity } = rules.budget;
  const maxErrors = rules.maxErrors ?? Infinity;
  const errors: FieldError[] = [];
  const copying = rules.copy !== false;
  let atRoot = true;
  let nodes = 0;
  let chars = 0;
  let tooDeep = false;
  const holder: unknown[] = [];
  // Children are pushed in reverse, so they are popped (and copied) in document order.
  const stack: Frame[] = [
    { source: value, target: copying ? holder : null, key: 0, depth: rules.rootDepth ?? 1, path },
  ];

  while (stack.length > 0 && errors.length < maxErrors) {
    const frame = stack.pop() as Frame;
    const { source, key, depth, path: at } = frame;
    const isRoot = atRoot;
    atRoot = false;
    let { target } = frame;
    if (typeof key === 'string') {
      nodes += 1;
      chars += key.length;
      const problem = rules.key(key);
      if (problem !== null) {
        errors.push({ field: at, message: problem });
        target = null;
      }
    }
    nodes += 1;
    if (nodes > maxNodes) return fail(whole, `has more than ${maxNodes} values and keys`);
    if (!isRoot) {
      const problem = rules.value(source);
      if (problem !== null) {
        errors.push({ field: at, message: problem });
        continue;
      }
    }

    let copy: unknown = source;
    /**
     * A container that holds leaves only (a long array of numbers, say) has them checked right
     * here, just as their frames would be next, but without a frame or a path for each.
     */
    let leaves: unknown[] | { source: JsonObject; keys: string[] } | null = null;
    if (Array.isArray(source) || isPlainObject(source)) {
      if (depth > maxDepth) {
        if (!tooDeep) {
          const message = rules.tooDeep?.(maxDepth) ?? `is nested deeper than ${maxDepth} levels`;
          errors.push({ field: at, message });
        }
        tooDeep = true;
        continue;
      }
      if (Array.isArray(source)) {
        // Nothing is allocated where nothing is copied (only checking, or below a refused key).
        const array = target === null ? null : new Array<unknown>(source.length);
        if (source.every(isLeaf)) leaves = source;
        else
          for (let i = source.length - 1; i >= 0; i -= 1) {
            stack.push({
              source: source[i],
              target: array,
              key: i,
              depth: depth + 1,
              path: itemPath(at, i),
            });
          }
        copy = array;
      } else {
        const keys = Object.keys(source);
        if (keys.length > maxKeys) return fail(at, `has more than ${maxKeys} fields`);
        const object: JsonObject | null = target === null ? null : {};
        if (keys.every((member) => isLeaf(source[member]))) leaves = { source, keys };
        else
          for (let i = keys.length - 1; i >= 0; i -= 1) {
            const member = keys[i] as string;
            stack.push({
              source: source[member],
              target: object,
              key: member,
              depth: depth + 1,
              path: memberPath(at, member, rules.paths),
            });
          }
        copy = object;
      }
    } else if (typeof source === 'string') {
      chars += source.length;
    }
    if (chars > maxChars) return fail(whole, `has more than ${maxChars} characters`);
    if (target !== null) setMember(target, key, copy);
    if (leaves === null) continue;

    // The leaves' frames, inlined: the same steps in the same order.
    const into = target === null ? null : (copy as JsonObject | unknown[]);
    const count = Array.isArray(leaves) ? leaves.length : leaves.keys.length;
    for (let i = 0; i < count && errors.length < maxErrors; i += 1) {
      let leaf: unknown;
      let leafTarget = into;
      let member: string | number = i;
      if (Array.isArray(leaves)) {
        leaf = leaves[i];
      } else {
        member = leaves.keys[i] as string;
        leaf = leaves.source[member];
        nodes += 1;
        chars += member.length;
        const problem = rules.key(member);
        if (problem !== null) {
          errors.push({ field: memberPath(at, member, rules.paths), message: problem });
          leafTarget = null;
        }
      }
      nodes += 1;
      if (nodes > maxNodes) return fail(whole, `has more than ${maxNodes} values and keys`);
      const problem = rules.value(leaf);
      if (problem !== null) {
        const field =
          typeof member === 'string' ? memberPath(at, member, rules.paths) : itemPath(at, member);
        errors.push({ field, message: problem });
        continue;
      }
      if (typeof leaf === 'string') chars += leaf.length;
      if (chars > maxChars) return fail(whole, `has more than ${maxChars} characters`);
      if (leafTarget !== null) setMember(leafTarget, member, leaf);
    }
  }

  if (errors.length > 0) return { ok: false, errors: errors.slice(0, maxErrors) };
  const checked = copying ? holder[0] : value;
  if (rules.budget.maxBytes !== undefined) {
    const size = serializedSize(checked);
    if (size > rules.budget.maxBytes) {
      return fail(whole, `is ${size} bytes serialized; the limit is ${rules.budget.maxBytes}`);
    }
  }
  if (copying && typeof checked === 'object' && checked !== null) guardedValues.add(checked);
  return { ok: true, value: checked };
}

/** checkJson for callers that answer a problem with a 400: the guarded copy, or the problems thrown. */
export function guardJson(value: unknown, rules: JsonRules, path: string): unknown {
  const result = checkJson(value, rules, path);
  if (!result.ok) throw new ValidationFailedError(result.errors);
  return result.value;
}

/** guardJson for rules with an object root (the default). */
export function guardJsonObject(
  value: unknown,
  rules: JsonRules & { root?: 'object' },
  path: string,
): Guarded<JsonObject> {
  return guardJson(value, rules, path) as Guarded<JsonObject>;
}
