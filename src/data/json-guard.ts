import { ValidationFailedError } from '../common/errors';
import {
  describeFieldNameFault,
  guardJsonObject,
  isScalar,
  jsonValueProblem,
  keyFault,
  PROTOTYPE_KEYS,
  type Guarded,
  type JsonBudget,
  type JsonObject,
  type JsonRules,
  type JsonScalar,
  type KeyRules,
  UNREADABLE_KEY_CHARACTERS,
} from '../common/json';

/**
 * The data API's configuration of the JSON validator (src/common/json) for items, values,
 * filters and field names: MongoDB-safe field names, any JSON value, hard budgets. The item
 * repository accepts only documents and filters that came out of here (`Guarded`).
 */

export { isGuarded, type Guarded, type JsonBudget } from '../common/json';
export { isPlainObject, isScalar, type JsonObject, type JsonScalar } from '../common/json';

export const DEFAULT_BUDGET: JsonBudget = { maxDepth: 20, maxNodes: 100_000, maxChars: 4_000_000 };

/** The budget of data request bodies: configured depth, body size as the character budget. */
export function dataBudget(limits: { dataMaxDepth: number; bodyBytes: number }): JsonBudget {
  return { maxDepth: limits.dataMaxDepth, maxNodes: 100_000, maxChars: limits.bodyBytes };
}

/** Longest field name or dotted path accepted. */
export const MAX_FIELD_NAME_LENGTH = 256;

const FIELD_NAME_RULES: KeyRules = {
  reserved: new Set([...PROTOTYPE_KEYS, '_bsontype']),
  storable: true,
  maxLength: MAX_FIELD_NAME_LENGTH,
  refusedCharacters: UNREADABLE_KEY_CHARACTERS,
};

/** Why a single field name (one segment, no dots) is not acceptable, or null when it is. */
export function fieldNameProblem(name: string): string | null {
  const fault = keyFault(name, FIELD_NAME_RULES);
  return fault && describeFieldNameFault(fault, name, FIELD_NAME_RULES);
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

function documentKeyProblem(key: string): string | null {
  const problem = fieldNameProblem(key);
  return problem && `field name ${problem}`;
}

/**
 * Validates and copies a JSON object whose keys are field names (an item, or `values`).
 * Lists every key and value problem; node and character overruns stop the walk at once.
 */
export function guardDocument(
  value: unknown,
  field: string,
  budget: JsonBudget = DEFAULT_BUDGET,
): Guarded<JsonObject> {
  return guardJsonObject(
    value,
    { key: documentKeyProblem, value: jsonValueProblem, budget },
    field,
  );
}

/** Keys are dotted paths; values are scalars only (objects and arrays would be operators). */
const FILTER_RULES = {
  key: (key) => {
    const problem = fieldPathProblem(key);
    return problem && `field path ${problem}`;
  },
  value: (value) =>
    isScalar(value) ? null : 'must be a string, number, boolean or null (equality only)',
  budget: { maxDepth: 1, maxKeys: 100 },
} satisfies JsonRules;

/**
 * Validates and copies an equality filter: keys are dotted paths, values scalars only, so no `$`
 * operator can get through.
 */
export function guardFilter(value: unknown, field: string): Guarded<Record<string, JsonScalar>> {
  return guardJsonObject(value, FILTER_RULES, field) as Guarded<Record<string, JsonScalar>>;
}
