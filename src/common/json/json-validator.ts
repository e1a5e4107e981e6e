import { ValidationFailedError } from '../errors';
import { isPlainObject, type JsonObject } from './json';
import {
  Layer,
  walk,
  type Guarded,
  type JsonCheck,
  type JsonRules,
  type MemberRules,
  type Slot,
} from './json-walk';

export {
  isGuarded,
  type Guarded,
  type JsonBudget,
  type JsonCheck,
  type JsonRules,
  type MemberRules,
} from './json-walk';

/**
 * The one validator for client-supplied JSON: request bodies at the validation pipe, data items,
 * values and filters, profile settings and metadata. Callers configure it with rules (which keys
 * and values are refused, with their wording) and budgets; it walks the input iteratively (an
 * explicit stack, so hostile nesting cannot exhaust the call stack), lists the problems in
 * document order, and returns a copy built from fresh plain objects and arrays that remembers
 * it came from here (`isGuarded`).
 */

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

/**
 * A free-form member as its own rules found it: the guarded copy, or the problems. The body's
 * check hands it on in the member's place; the handler reads it (`take`) where it would have
 * checked the member itself, so its problems come after the DTO's, as they always have.
 */
export class CheckedJson {
  constructor(readonly result: JsonCheck) {}

  /** The guarded copy, or the problems thrown as a 400. */
  take(): unknown {
    if (!this.result.ok) throw new ValidationFailedError(this.result.errors);
    return this.result.value;
  }
}

/** The layer or check of a free-form member (or element) that begins at `child`. */
/**
 * Checks `value` against the rules. Problems of the whole value are reported at `path`, or at
 * 'body' when `path` is '' (a request body, whose members are named without a prefix). Node,
 * character and key-count overruns end the walk and are reported alone.
 */
export function checkJson(value: unknown, rules: JsonRules, path: string): JsonCheck {
  return walk(value, rules, path, null).outer.result();
}

/**
 * checkJson of a request body (path '') whose free-form members also have rules of their own
 * (`members`; null: none, the member goes on as sent): one walk applies both. The body's
 * problems are answered first and alone; otherwise the copy holds, in each such member's place,
 * its CheckedJson (an array of them for `each`), and every other free-form member as sent.
 */
export function checkBody(
  value: unknown,
  rules: JsonRules,
  members: ReadonlyMap<string, MemberRules | null>,
): JsonCheck {
  const { outer, slots } = walk(value, rules, '', members);
  const result = outer.result();
  if (!result.ok || !isPlainObject(result.value)) return result;
  const body = result.value;
  for (const [name, slot] of slots) {
    body[name] = Array.isArray(slot) ? slot.map((element) => checkedOf(element)) : checkedOf(slot);
  }
  return result;
}

function checkedOf(slot: Slot): CheckedJson {
  return new CheckedJson(slot instanceof Layer ? slot.result() : slot);
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
