/**
 * `GET /data/openapi.json`: an OpenAPI 3.1 document of one namespace's collections in one branch,
 * for generating typed clients. A collection with a JSON Schema gets its own item types, made of
 * its schema and the service's fields; one without gets the open item types every collection has
 * in the service's own document. Pure: the controller hands it the registry entries.
 */
import { createHash } from 'node:crypto';
import { API_KEY_SCHEME, BEARER_SCHEME } from '../../../common/http/openapi-shared';
import { DEFAULT_OWNER_FIELD } from '../../query/data.constants';
import { collectionPaths, type ItemTypeNames } from './collection-paths';
import { sharedComponents } from './shared-components';
import { definitionNamer, embedSchema, isSchemaObject, type JsonSchema } from './schema-embedding';

type Json = Record<string, unknown>;

export interface TypedCollection {
  name: string;
  /** The collection's JSON Schema (parsed), when it has one. */
  schema?: unknown;
  /** Whether it has a search configuration (its list takes `q`). */
  search?: boolean;
}

export interface DocumentContext {
  /** The request branch ('' for the standard one). */
  branch: string;
  limits: { listDefault: number; listMax: number };
}

/** The fields every stored item has: the service's. */
const SERVICE_FIELDS: Json = {
  _id: { type: 'string', description: "The item's identifier" },
  _createdAt: { type: 'string', format: 'date-time' },
  _updatedAt: { type: 'string', format: 'date-time' },
};
const SERVICE_REQUIRED = ['_id', '_createdAt', '_updatedAt'];
/** The owner field under its default name; a collection's schema may describe it otherwise. */
const OWNER_FIELD: Json = {
  [DEFAULT_OWNER_FIELD]: {
    type: 'string',
    description: 'The owner (a root subject, a sub profile accountId or a team id)',
  },
};
/** What a create may carry besides the client's fields: its own `_id`, never the timestamps. */
const CREATE_FIELDS: Json = {
  _id: { type: 'string', minLength: 1, maxLength: 128 },
  _createdAt: false,
  _updatedAt: false,
};
/** An update sets none of the service's fields. */
const UPDATE_FIELDS: Json = { _id: false, _createdAt: false, _updatedAt: false };

/** The item types of collections without a schema: open objects. */
const OPEN_TYPES: ItemTypeNames = { item: 'Item', newItem: 'NewItem', values: 'Values' };
const OPEN_SCHEMAS: Json = {
  Item: {
    type: 'object',
    required: SERVICE_REQUIRED,
    properties: SERVICE_FIELDS,
    additionalProperties: true,
  },
  NewItem: { type: 'object', properties: CREATE_FIELDS, additionalProperties: true },
  Values: {
    type: 'object',
    minProperties: 1,
    properties: UPDATE_FIELDS,
    additionalProperties: true,
  },
};

/**
 * A collection's component names. Collection names hold no dot, so `<name>.Item` can be no other
 * collection's component, nor a shared one.
 */
export function itemTypeNames(collection: string): ItemTypeNames & { fields: string } {
  return {
    fields: `${collection}.Fields`,
    item: `${collection}.Item`,
    newItem: `${collection}.NewItem`,
    values: `${collection}.Values`,
  };
}

const propertiesOf = (schema: Json): Json =>
  isSchemaObject(schema.properties) ? schema.properties : {};

/**
 * The stored root with more properties: `first` yield to the schema's own, `last` override them
 * (the service's fields are the service's, whatever a schema says of them).
 */
function extended(root: JsonSchema, first: Json, last: Json, required: string[]): JsonSchema {
  if (root === false) return false;
  const schema: Json = root === true ? { type: 'object' } : root;
  const own = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
  const allRequired = [...new Set([...own, ...required])];
  return {
    ...schema,
    properties: { ...first, ...propertiesOf(schema), ...last },
    ...(allRequired.length > 0 ? { required: allRequired } : {}),
  };
}

/** What PUT `values` may hold: the schema's fields, each optional; at least one. */
function valuesOf(root: JsonSchema): JsonSchema {
  if (!isSchemaObject(root) || !isSchemaObject(root.properties)) return OPEN_SCHEMAS.Values as Json;
  const values: Json = {
    type: 'object',
    minProperties: 1,
    properties: { ...OWNER_FIELD, ...root.properties, ...UPDATE_FIELDS },
  };
  for (const keyword of ['patternProperties', 'propertyNames'])
    if (root[keyword] !== undefined) values[keyword] = root[keyword];
  // Without composition, properties not named above are "unevaluated" exactly when "additional".
  const rest = root.additionalProperties ?? root.unevaluatedProperties;
  if (rest !== undefined) values.additionalProperties = rest;
  return values;
}

/** The components of a collection with a schema. */
function typedSchemas(collection: string, schema: unknown): Json {
  const names = itemTypeNames(collection);
  const { root, defs } = embedSchema(schema, {
    root: names.fields,
    def: definitionNamer(`${collection}.defs.`),
  });
  return {
    [names.fields]: root,
    [names.item]: extended(root, OWNER_FIELD, SERVICE_FIELDS, SERVICE_REQUIRED),
    [names.newItem]: extended(root, OWNER_FIELD, CREATE_FIELDS, []),
    [names.values]: valuesOf(root),
    ...defs,
  };
}

export function typedCollectionsDocument(
  collections: TypedCollection[],
  context: DocumentContext,
): Json {
  const sorted = [...collections].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const shared = sharedComponents(context.limits);
  const schemas: Json = { ...(shared.schemas as Json), ...OPEN_SCHEMAS };
  const paths: Json = {};
  for (const { name, schema, search = false } of sorted) {
    const typed = schema !== undefined;
    if (typed) Object.assign(schemas, typedSchemas(name, schema));
    const types = typed ? itemTypeNames(name) : OPEN_TYPES;
    Object.assign(paths, collectionPaths(name, types, { search }));
  }
  const components = { ...shared, schemas };
  // The version changes exactly when the document does: a collection, a schema, a search
  // configuration or a limit.
  const version = createHash('sha256')
    .update(JSON.stringify({ paths, components }))
    .digest('hex')
    .slice(0, 12);
  const typedNames = sorted.filter((c) => c.schema !== undefined).map((c) => c.name);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Data collections',
      version,
      description: [
        `The caller's data collections in branch ${JSON.stringify(context.branch)}: ${sorted.length} collection(s), ${typedNames.length} with a JSON Schema.`,
        "A collection with a schema has the item types `<name>.Item` (a stored item), `<name>.NewItem` (the `item` of a create) and `<name>.Values` (the `values` of an update), made of its schema and the service's fields (`_id`, `_createdAt`, `_updatedAt`, the owner field `userId`).",
        'Lists take `expand` (references replaced by the items they name), and the lists of collections with a search configuration take `q` (full-text search).',
        "The service's own document (`/docs-json`) describes every route.",
      ].join('\n\n'),
    },
    security: [{ [API_KEY_SCHEME]: [] }, { [BEARER_SCHEME]: [] }],
    tags: sorted.map(({ name }) => ({ name })),
    paths,
    components,
  };
}

/**
 * The typed collection of a registry entry: its schema text parsed. Text that is not JSON (the
 * service stores only JSON) leaves the collection open rather than failing the document.
 */
export function typedCollectionOf(entry: {
  name: string;
  rules: { schema?: { text: string }; search?: object };
}): TypedCollection {
  const named = { name: entry.name, ...(entry.rules.search ? { search: true } : {}) };
  const text = entry.rules.schema?.text;
  if (text === undefined) return named;
  try {
    return { ...named, schema: JSON.parse(text) as unknown };
  } catch {
    return named;
  }
}
