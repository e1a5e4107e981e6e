import { ValidationFailedError } from '../../common/errors';
import {
  CheckedJson,
  describeFieldNameFault,
  isPlainObject,
  guardJsonObject,
  jsonValueProblem,
  keyFault,
  PROTOTYPE_KEYS,
  type Guarded,
  type JsonBudget,
  type JsonObject,
  type JsonRules,
  type KeyRules,
  UNREADABLE_KEY_CHARACTERS,
} from '../../common/json';
import { sharedSchema, sharedSchemaRef } from '../../common/http/openapi-schemas';
import type { FreeFormRules } from '../../common/http/validation';
import { MANAGED_FIELDS, REVISION_FIELD, WORDS_FIELD } from './data.constants';

/**
 * The data API's configuration of the JSON validator (src/common/json) for items, values,
 * filters and field names: MongoDB-safe field names, any JSON value, hard budgets. The item
 * repository accepts only documents and filters that came out of here (`Guarded`).
 */

export const DEFAULT_BUDGET: JsonBudget = { maxDepth: 20, maxNodes: 100_000, maxChars: 4_000_000 };

/** The budget of data request bodies: configured depth, body size as the character budget. */
export function dataBudget(limits: { dataMaxDepth: number; bodyBytes: number }): JsonBudget {
  return { maxDepth: limits.dataMaxDepth, maxNodes: 100_000, maxChars: limits.bodyBytes };
}

/** The value at a dotted path of a document; undefined when the path leaves its objects. */
export function valueAtPath(doc: Record<string, unknown>, path: string): unknown {
  let current: unknown = doc;
  for (const segment of path.split('.')) {
    if (!isPlainObject(current) || !Object.hasOwn(current, segment)) return undefined;
    current = current[segment];
  }
  return current;
}

/** Longest field name or dotted path accepted. */
export const MAX_FIELD_NAME_LENGTH = 256;

const FIELD_NAME_RULES: KeyRules = {
  // The server's revision record and word list (data.constants) are no client fields, at any depth.
  reserved: new Set([...PROTOTYPE_KEYS, '_bsontype', REVISION_FIELD, WORDS_FIELD]),
  storable: true,
  maxLength: MAX_FIELD_NAME_LENGTH,
  refusedCharacters: UNREADABLE_KEY_CHARACTERS,
};

/**
 * The rules above as JSON Schema patterns, for the OpenAPI document: a name is accepted by the
 * service exactly when it matches (json-guard.spec.ts holds them to fieldNameProblem and
 * fieldPathProblem). Lengths are in characters (code points), as JSON Schema counts them.
 */
const NAME_CHARACTER = String.raw`[^."\\\u0000-\u001F]`;
function notAt(names: Iterable<string>, end: string): string {
  return String.raw`(?!\$)(?!(?:${[...names].join('|')})${end})`;
}
const PATH_SEGMENT = `${notAt(FIELD_NAME_RULES.reserved, String.raw`(?:\.|$)`)}${NAME_CHARACTER}+`;

/** One field name: authField, uniqueField. */
export const FIELD_NAME_SCHEMA_PATTERN = `^${notAt(FIELD_NAME_RULES.reserved, '$')}${NAME_CHARACTER}{1,${MAX_FIELD_NAME_LENGTH}}$`;
/** A field name that may own items: not one the server manages (`_id`, `_createdAt`, `_updatedAt`). */
export const OWNER_FIELD_SCHEMA_PATTERN = `^${notAt([...FIELD_NAME_RULES.reserved, ...MANAGED_FIELDS], '$')}${NAME_CHARACTER}{1,${MAX_FIELD_NAME_LENGTH}}$`;
/** A dotted path (sort, index fields, item routes' indexName); at most 256 characters in all. */
export const FIELD_PATH_SCHEMA_PATTERN = String.raw`^${PATH_SEGMENT}(?:\.${PATH_SEGMENT})*$`;
/** A dotted path of the client's: not `_id`, a timestamp, or inside one (access rules' protected fields). */
export const CLIENT_PATH_SCHEMA_PATTERN = String.raw`^${notAt(MANAGED_FIELDS, String.raw`(?:\.|$)`)}${PATH_SEGMENT}(?:\.${PATH_SEGMENT})*$`;

/**
 * White space a database may trim from the ends of a sort or projection path segment (FerretDB
 * refuses such segments there, MongoDB does not): Go's unicode.IsSpace without the controls,
 * which no field name holds anyway.
 */
const EDGE_SPACE = String.raw`\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000`;
const EDGE_SPACE_RE = new RegExp(`^[${EDGE_SPACE}]|[${EDGE_SPACE}]$`, 'u');

/** Why a sort or projection path is not acceptable, or null: a field path whose segments do not start or end with a space. */
export function orderPathProblem(path: string): string | null {
  const problem = fieldPathProblem(path);
  if (problem) return problem;
  const spaced = path.split('.').find((segment) => EDGE_SPACE_RE.test(segment));
  return spaced === undefined ? null : `segment '${spaced}' must not start or end with a space`;
}

const EDGE_CHARACTER = String.raw`[^."\\\u0000-\u001F${EDGE_SPACE}]`;
const ORDER_SEGMENT = `${notAt(FIELD_NAME_RULES.reserved, String.raw`(?:\.|$)`)}${EDGE_CHARACTER}(?:${NAME_CHARACTER}*${EDGE_CHARACTER})?`;
/** A path orderPathProblem accepts (aggregate groupBy and field); at most 256 characters. */
export const ORDER_PATH_SCHEMA_PATTERN = String.raw`^${ORDER_SEGMENT}(?:\.${ORDER_SEGMENT})*$`;

/** A path inside a comma-separated list (sort, fields): no comma, no space at a segment's ends. */
const LISTED_CHARACTER = String.raw`[^.,"\\\u0000-\u001F]`;
const LISTED_EDGE = String.raw`[^.,"\\\u0000-\u001F${EDGE_SPACE}]`;
const LISTED_SEGMENT = `${notAt(FIELD_NAME_RULES.reserved, String.raw`(?:[.,]|$)`)}${LISTED_EDGE}(?:${LISTED_CHARACTER}*${LISTED_EDGE})?`;
const LISTED_PATH = String.raw`${LISTED_SEGMENT}(?:\.${LISTED_SEGMENT})*`;
/** `sort`: paths, each optionally with `-`, at most five. */
export const SORT_SCHEMA_PATTERN = `^-?${LISTED_PATH}(?:,-?${LISTED_PATH}){0,4}$`;
/** `fields`: paths to include (none starting with `-`), or paths each with `-` to exclude. */
export const FIELDS_SCHEMA_PATTERN = `^(?:(?!-)${LISTED_PATH}(?:,(?!-)${LISTED_PATH})*|-${LISTED_PATH}(?:,-${LISTED_PATH})*)$`;

/** A reference path of `expand` (no comma or colon; not a server-managed field) and its collection. */
const EXPAND_CHARACTER = String.raw`[^.,:"\\\u0000-\u001F]`;
const EXPAND_EDGE = String.raw`[^.,:"\\\u0000-\u001F${EDGE_SPACE}]`;
const EXPAND_SEGMENT = `${notAt(FIELD_NAME_RULES.reserved, String.raw`(?:[.:]|$)`)}${EXPAND_EDGE}(?:${EXPAND_CHARACTER}*${EXPAND_EDGE})?`;
const EXPAND_PAIR = String.raw`${notAt(MANAGED_FIELDS, '[.:]')}${EXPAND_SEGMENT}(?:\.${EXPAND_SEGMENT})*:[A-Za-z][A-Za-z0-9_-]{0,63}`;
/** `expand`: `path:collection` pairs, at most four. */
export const EXPAND_SCHEMA_PATTERN = `^${EXPAND_PAIR}(?:,${EXPAND_PAIR}){0,3}$`;

/** Why a single field name (one segment, no dots) is not acceptable, or null when it is. */
export function fieldNameProblem(name: string): string | null {
  const fault = keyFault(name, FIELD_NAME_RULES);
  return fault && describeFieldNameFault(fault, name, FIELD_NAME_RULES);
}

/** Why a dotted path (filter and sort keys, index fields) is not acceptable, or null. */
export function fieldPathProblem(path: string): string | null {
  if (path.length === 0) return 'must not be empty';
  if ([...path].length > MAX_FIELD_NAME_LENGTH)
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
 * Any JSON value, except an array directly inside an array: the fallback database (FerretDB)
 * refuses to store one, and the service accepts only what MongoDB and FerretDB both store.
 */
function documentValueProblem(value: unknown): string | null {
  if (Array.isArray(value) && value.some((element) => Array.isArray(element)))
    return 'must not hold an array directly inside an array (wrap the inner one in an object)';
  return jsonValueProblem(value);
}

/** The values documentValueProblem accepts, for the OpenAPI document. */
export const DATA_VALUE = sharedSchema('DataValue', {
  description: 'Any JSON value; an array holds no array directly',
  anyOf: [sharedSchemaRef('DataElement'), { type: 'array', items: sharedSchemaRef('DataElement') }],
});
sharedSchema('DataElement', {
  description: 'Any JSON value but an array',
  anyOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'object', nullable: true, additionalProperties: DATA_VALUE },
  ],
});

/** The rules of a JSON object whose keys are field names (an item, or `values`). */
function documentRules(budget: JsonBudget): JsonRules & { root?: 'object' } {
  return { key: documentKeyProblem, value: documentValueProblem, budget };
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
  return guardJsonObject(value, documentRules(budget), field);
}

/**
 * `item` and `values` of data bodies: the validation pipe checks them with the document rules
 * under the data budget in the walk that checks the body (FreeFormMember), and hands on their
 * CheckedJson for readDocument.
 */
export const DOCUMENT_MEMBER: FreeFormRules = { of: (limits) => documentRules(dataBudget(limits)) };

/** `items` of a bulk create: each item checked alone, its problems named as a lone POST's. */
export const DOCUMENTS_MEMBER: FreeFormRules = { ...DOCUMENT_MEMBER, each: true, path: 'item' };

/**
 * A document member of a data body: the guarded copy the pipe's check made (or its problems,
 * thrown here, after the DTO's own), or, for a value that did not come through the pipe, the
 * value guarded here with `budget`.
 */
export function readDocument(
  member: unknown,
  field: string,
  budget: JsonBudget,
): Guarded<JsonObject> {
  if (member instanceof CheckedJson) return member.take() as Guarded<JsonObject>;
  return guardDocument(member, field, budget);
}

/**
 * Keys are dotted paths at the top and operator names below (both must be acceptable field
 * names, so no `$` key gets through); values are JSON. Which shapes mean what is decided by
 * filter-operators.ts, which refuses everything else.
 */
const FILTER_RULES = {
  key: (key) => {
    const problem = fieldPathProblem(key);
    return problem && `field path ${problem}`;
  },
  value: jsonValueProblem,
  // filter → field → operators → an in/nin list → its values
  budget: { maxDepth: 4, maxKeys: 100, maxNodes: 10_000 },
} satisfies JsonRules;

/** Validates and copies a body filter: `{"<path>": value | {"<operator>": value}}`. */
export function guardFilter(value: unknown, field: string): Guarded<JsonObject> {
  return guardJsonObject(value, FILTER_RULES, field);
}

/** A body `filter`: checked with FILTER_RULES in the validation pipe's walk (FreeFormMember). */
export const FILTER_MEMBER: FreeFormRules = { of: () => FILTER_RULES };

/** A filter member as the pipe checked it (see readDocument), or a value guarded here. */
export function readFilter(member: unknown, field: string): Guarded<JsonObject> {
  if (member instanceof CheckedJson) return member.take() as Guarded<JsonObject>;
  return guardFilter(member, field);
}
