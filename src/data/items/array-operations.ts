import { ValidationFailedError } from '../../common/errors';
import { MANAGED_FIELDS } from '../query/data.constants';
import { ElementNotFoundError, NotAnArrayError } from '../data.errors';
import { guardDocument, orderPathProblem } from '../query/json-guard';
import {
  isPlainObject,
  isScalar,
  type JsonBudget,
  type JsonObject,
  type JsonScalar,
} from '../../common/json';

/**
 * Array operations on one item (`PATCH /data/{c}/{indexName}/{indexValue}`): push a value, update
 * the first element whose fields match, remove an element by position or every element that
 * matches. Each is computed on the item as read and written back as the whole array under the
 * item's revision, so the same code is exact on every database (FerretDB has neither the
 * positional operator, nor arrayFilters, nor a working conditional $pull).
 */

export type ArrayOperation =
  | { kind: 'push'; field: string; value: unknown }
  | { kind: 'updateElement'; field: string; match: Record<string, JsonScalar>; values: JsonObject }
  | { kind: 'removeAt'; field: string; position: number }
  | { kind: 'removeMatching'; field: string; match: Record<string, JsonScalar> };

const OPERATIONS = ['push', 'updateElement', 'removeElement'] as const;

function fail(field: string, message: string): never {
  throw new ValidationFailedError([{ field, message }]);
}

/** The target field: a dotted path (no space at a segment's ends), not one the server manages. */
function arrayField(value: unknown, at: string): string {
  if (typeof value !== 'string') fail(at, 'must be a string');
  const problem = orderPathProblem(value);
  if (problem) fail(at, `field path ${problem}`);
  const field = value;
  if (MANAGED_FIELDS.has(field.split('.')[0] as string))
    fail(at, `'${field}' is managed by the server`);
  return field;
}

/** `{k: scalar, …}`, at least one: the fields an element must equal. */
function elementMatch(value: unknown, at: string, budget: JsonBudget): Record<string, JsonScalar> {
  const match = guardDocument(value, at, budget);
  const keys = Object.keys(match);
  if (keys.length === 0) fail(at, 'must name at least one field');
  for (const key of keys)
    if (!isScalar(match[key])) fail(`${at}.${key}`, 'must be a string, number, boolean or null');
  return match as Record<string, JsonScalar>;
}

/** The one operation of a PATCH body; every other shape is a 400 naming the member. */
export function parseArrayOperation(
  body: Record<string, unknown>,
  budget: JsonBudget,
): ArrayOperation {
  const given = OPERATIONS.filter((op) => body[op] !== undefined);
  if (given.length !== 1) fail('body', `must hold exactly one of ${OPERATIONS.join(', ')}`);
  const op = given[0] as (typeof OPERATIONS)[number];
  const spec = body[op];
  if (!isPlainObject(spec)) fail(op, 'must be a JSON object');
  const field = arrayField(spec.field, `${op}.field`);
  if (op === 'push') {
    if (spec.value === undefined) fail('push.value', 'is required');
    // The guard's rules for item values, an array inside an array included.
    const { value } = guardDocument({ value: spec.value }, 'push', budget);
    if (Array.isArray(value))
      fail('push.value', 'must not be an array (an array cannot hold an array directly)');
    return { kind: 'push', field, value };
  }
  if (op === 'updateElement') {
    const match = elementMatch(spec.match, 'updateElement.match', budget);
    const values = guardDocument(spec.values, 'updateElement.values', budget);
    if (Object.keys(values).length === 0) fail('updateElement.values', 'must not be empty');
    return { kind: 'updateElement', field, match, values };
  }
  const hasPosition = spec.position !== undefined;
  if (hasPosition === (spec.match !== undefined))
    fail('removeElement', 'give either position or match');
  if (hasPosition) {
    const { position } = spec;
    if (typeof position !== 'number' || !Number.isInteger(position) || position < 0)
      fail('removeElement.position', 'must be an integer of 0 or more');
    return { kind: 'removeAt', field, position };
  }
  return {
    kind: 'removeMatching',
    field,
    match: elementMatch(spec.match, 'removeElement.match', budget),
  };
}

/**
 * The value at `path`; undefined when the path ends early. A path that runs through something
 * other than an object (an array, a string) cannot hold the array: 409.
 */
function valueAt(item: Record<string, unknown>, path: string): unknown {
  let current: unknown = item;
  for (const segment of path.split('.')) {
    if (current === undefined) return undefined;
    if (!isPlainObject(current)) throw new NotAnArrayError(path);
    current = current[segment];
  }
  return current;
}

function matches(element: unknown, match: Record<string, JsonScalar>): boolean {
  return isPlainObject(element) && Object.entries(match).every(([k, v]) => element[k] === v);
}

/** The array the operation leaves in `field`, computed from the item as stored. */
export function applyArrayOperation(item: Record<string, unknown>, op: ArrayOperation): unknown[] {
  const current = valueAt(item, op.field);
  if (current === undefined && op.kind === 'push') return [op.value];
  if (!Array.isArray(current)) {
    if (current === undefined) throw new ElementNotFoundError(op.field);
    throw new NotAnArrayError(op.field);
  }
  return applyToArray(current as unknown[], op);
}

function applyToArray(current: unknown[], op: ArrayOperation): unknown[] {
  switch (op.kind) {
    case 'push':
      return [...current, op.value];
    case 'updateElement': {
      const at = current.findIndex((element) => matches(element, op.match));
      if (at < 0) throw new ElementNotFoundError(op.field);
      const next = [...current];
      next[at] = { ...(current[at] as JsonObject), ...op.values };
      return next;
    }
    case 'removeAt':
      if (op.position >= current.length) throw new ElementNotFoundError(op.field);
      return current.filter((_, i) => i !== op.position);
    case 'removeMatching': {
      const kept = current.filter((element) => !matches(element, op.match));
      if (kept.length === current.length) throw new ElementNotFoundError(op.field);
      return kept;
    }
  }
}
