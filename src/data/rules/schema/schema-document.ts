import { RE2JS } from 're2js';
import { ValidationFailedError, type FieldError } from '../../../common/errors';
import { isPlainObject } from '../../../common/json';
import { MANAGED_FIELDS } from '../../query/data.constants';

/**
 * What a collection schema may say: JSON Schema draft 2020-12, less what could reach outside the
 * document or stall an instance. Checked once, when a schema is put, so that every refusal names
 * where in the schema it is; Ajv's strict mode then compiles what is left.
 */

/** Keywords whose value is one schema. */
export const SCHEMA_KEYWORDS = new Set([
  'not',
  'if',
  'then',
  'else',
  'items',
  'contains',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
/** Keywords whose value is an array of schemas. */
export const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
export const SCHEMA_MAP_KEYWORDS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'dependentSchemas',
]);
/**
 * Of the keywords above, those whose schemas apply to the value itself; the others' apply to the
 * value's members or elements (one level down the item).
 */
export const IN_PLACE_KEYWORDS = new Set([
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
  'allOf',
  'anyOf',
  'oneOf',
  'dependentSchemas',
  '$defs',
]);
/** Keywords whose value is data or an annotation, not a schema. */
const VALUE_KEYWORDS = new Set([
  '$schema',
  '$ref',
  '$anchor',
  '$comment',
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'required',
  'dependentRequired',
  'format',
  'contentEncoding',
  'contentMediaType',
  'title',
  'description',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'examples',
]);

/** Formats a schema may name (ajv-formats); any other is refused rather than ignored. */
export const SUPPORTED_FORMATS: readonly string[] = [
  'date',
  'time',
  'date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
];
const FORMATS = new Set(SUPPORTED_FORMATS);

export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

export interface SchemaLimits {
  maxBytes: number;
  maxDepth: number;
}

/**
 * Checks a schema sent by a client and answers its JSON text; every problem is a 400 naming the
 * place in the schema (`schema.properties.age.pattern`) and what is wrong there.
 */
export function checkSchemaDocument(schema: unknown, limits: SchemaLimits): string {
  const problems: FieldError[] = [];
  const text = JSON.stringify(schema);
  if (Buffer.byteLength(text) > limits.maxBytes)
    throw new ValidationFailedError([
      { field: 'schema', message: `must be at most ${limits.maxBytes} bytes (SCHEMA_MAX_BYTES)` },
    ]);
  if (!isPlainObject(schema)) {
    throw new ValidationFailedError([{ field: 'schema', message: 'must be a JSON object' }]);
  }
  walkSchema(schema, 'schema', 1, limits.maxDepth, problems);
  checkServiceFields(schema, problems);
  if (problems.length > 0) throw new ValidationFailedError(problems.slice(0, 20));
  return text;
}

function walkSchema(
  node: unknown,
  at: string,
  depth: number,
  maxDepth: number,
  problems: FieldError[],
): void {
  if (typeof node === 'boolean') return;
  if (!isPlainObject(node)) {
    problems.push({ field: at, message: 'must be a schema (an object or a boolean)' });
    return;
  }
  if (depth > maxDepth) {
    problems.push({ field: at, message: `nests deeper than ${maxDepth} (SCHEMA_MAX_DEPTH)` });
    return;
  }
  for (const [keyword, value] of Object.entries(node)) {
    const here = `${at}.${keyword}`;
    // `depth` counts JSON levels (objects and arrays), as DATA_MAX_DEPTH does.
    if (SCHEMA_KEYWORDS.has(keyword)) walkSchema(value, here, depth + 1, maxDepth, problems);
    else if (SCHEMA_LIST_KEYWORDS.has(keyword)) {
      if (!Array.isArray(value)) problems.push({ field: here, message: 'must be an array' });
      else value.forEach((s, i) => walkSchema(s, `${here}.${i}`, depth + 2, maxDepth, problems));
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword)) {
      if (!isPlainObject(value)) problems.push({ field: here, message: 'must be an object' });
      else
        for (const [name, s] of Object.entries(value)) {
          if (keyword === 'patternProperties') checkPattern(name, here, problems);
          walkSchema(s, `${here}.${name}`, depth + 2, maxDepth, problems);
        }
    } else if (VALUE_KEYWORDS.has(keyword)) checkValue(keyword, value, here, problems);
    else problems.push({ field: here, message: `the keyword '${keyword}' is not supported` });
  }
}

function checkValue(keyword: string, value: unknown, at: string, problems: FieldError[]): void {
  switch (keyword) {
    case '$schema':
      if (value !== DRAFT_2020_12)
        problems.push({ field: at, message: `only '${DRAFT_2020_12}' is supported` });
      return;
    case '$ref':
      if (typeof value !== 'string' || !value.startsWith('#'))
        problems.push({ field: at, message: "must point inside the schema (start with '#')" });
      return;
    case 'format':
      if (typeof value !== 'string' || !FORMATS.has(value))
        problems.push({
          field: at,
          message: `the format ${JSON.stringify(value)} is not supported (supported: ${SUPPORTED_FORMATS.join(', ')})`,
        });
      return;
    case 'pattern':
      if (typeof value !== 'string') problems.push({ field: at, message: 'must be a string' });
      else checkPattern(value, at, problems);
      return;
  }
}

/**
 * A pattern runs on the server against every item written: it must be one that RE2 runs, in
 * time linear in the input (no backreferences, no lookaround), so no schema can stall an instance.
 */
function checkPattern(pattern: string, at: string, problems: FieldError[]): void {
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    problems.push({
      field: at,
      message: `the pattern cannot run in linear time (RE2 syntax, no backreferences or lookaround): ${(error as Error).message}`,
    });
  }
}

/** `_id`, `_createdAt` and `_updatedAt` are the service's: a schema does not describe them. */
function checkServiceFields(schema: Record<string, unknown>, problems: FieldError[]): void {
  const named: unknown[] = [
    ...(isPlainObject(schema.properties) ? Object.keys(schema.properties) : []),
    ...(Array.isArray(schema.required) ? (schema.required as unknown[]) : []),
  ];
  for (const field of new Set(named))
    if (typeof field === 'string' && MANAGED_FIELDS.has(field))
      problems.push({
        field: 'schema',
        message: `'${field}' is managed by the service and is not part of the schema`,
      });
}
