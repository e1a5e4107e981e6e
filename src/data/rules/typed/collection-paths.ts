/**
 * The paths of one collection in the typed document (shared-components.ts has what they share).
 * They mirror the item routes (collection-items.controller.ts, item-by-value.controller.ts) for
 * one collection name: the same bodies, answers, headers and query parameters, with the
 * collection's own item types.
 * `fields` (a projection) is left out: a projected item is not the collection's item type.
 */
import { FIELD_NAME_SCHEMA_PATTERN } from '../../query/json-guard';

type Json = Record<string, unknown>;

/** The component names of one collection's item types. */
export interface ItemTypeNames {
  item: string;
  newItem: string;
  values: string;
}

const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const ref = (kind: 'parameters' | 'responses', name: string): Json => ({
  $ref: `#/components/${kind}/${name}`,
});
const json = (schema: Json): Json => ({ 'application/json': { schema } });

const ETAG = {
  description: 'The item\'s ETag: `"<identity>.<revision>"`',
  schema: { type: 'string' },
};
const PROBLEM = ref('responses', 'Problem');

/** What a collection's paths depend on besides its item types. */
export interface CollectionFeatures {
  /** The collection has a search configuration: its list takes `q`. */
  search: boolean;
}

/**
 * The collection's paths: its list and creates, and its items by `_id`. The list and the read
 * take `expand`; the list takes `q` where the collection has a search configuration.
 */
export function collectionPaths(
  collection: string,
  types: ItemTypeNames,
  features: CollectionFeatures = { search: false },
): Json {
  const item = schemaRef(types.item);
  const itemAnswer = (description: string): Json => ({
    description,
    headers: { ETag: ETAG },
    content: json(item),
  });
  return {
    [`/data/${collection}`]: {
      get: {
        operationId: `${collection}.list`,
        tags: [collection],
        summary: `Lists items of ${collection} (keyset pagination)`,
        parameters: [
          'authField',
          'filter',
          'existsFilter',
          'sort',
          'sortOrder',
          'limit',
          'after',
          'before',
          ...(features.search ? ['q'] : []),
          'expand',
        ].map((name) => ref('parameters', name)),
        responses: {
          200: {
            description: 'Items; `Link: <…>; rel="next"` when a further page exists',
            headers: {
              Link: { description: 'The next (or previous) page', schema: { type: 'string' } },
              'Feed-Position': {
                description: 'The newest event id when the list was read (docs/events.md)',
                schema: { type: 'string' },
              },
            },
            content: json({ type: 'array', items: item }),
          },
          204: { description: 'Nothing matches (or the collection does not exist)' },
          default: PROBLEM,
        },
      },
      post: {
        operationId: `${collection}.create`,
        tags: [collection],
        summary: `Stores an item in ${collection}`,
        requestBody: {
          required: true,
          content: json({
            type: 'object',
            required: ['item'],
            properties: {
              item: schemaRef(types.newItem),
              uniqueField: { type: 'string', pattern: FIELD_NAME_SCHEMA_PATTERN },
              authField: schemaRef('AuthField'),
              onConflict: { type: 'string', enum: ['error', 'return'], default: 'error' },
            },
            additionalProperties: false,
          }),
        },
        responses: {
          200: {
            ...itemAnswer('The stored item (with onConflict "return": the one holding the value)'),
            headers: {
              ETag: ETAG,
              'X-Item-Created': {
                description: 'With onConflict "return": whether the item was created',
                schema: { type: 'string', enum: ['true', 'false'] },
              },
            },
          },
          default: PROBLEM,
        },
      },
    },
    [`/data/${collection}/_id/{id}`]: {
      parameters: [ref('parameters', 'id')],
      get: {
        operationId: `${collection}.get`,
        tags: [collection],
        summary: `Reads the item of ${collection} with this _id`,
        parameters: ['authField', 'filter', 'existsFilter', 'expand', 'ifNoneMatch'].map((name) =>
          ref('parameters', name),
        ),
        responses: {
          200: itemAnswer('The item'),
          304: { description: 'If-None-Match named the current ETag', headers: { ETag: ETAG } },
          default: PROBLEM,
        },
      },
      put: {
        operationId: `${collection}.update`,
        tags: [collection],
        summary: `Sets fields of the item of ${collection} with this _id`,
        parameters: [ref('parameters', 'ifMatch')],
        requestBody: {
          required: true,
          content: json({
            type: 'object',
            required: ['values'],
            properties: {
              values: schemaRef(types.values),
              filter: schemaRef('Filter'),
              authField: schemaRef('AuthField'),
            },
            additionalProperties: false,
          }),
        },
        responses: { 200: itemAnswer('The updated item'), default: PROBLEM },
      },
      delete: {
        operationId: `${collection}.delete`,
        tags: [collection],
        summary: `Deletes the item of ${collection} with this _id`,
        parameters: [ref('parameters', 'ifMatch')],
        requestBody: {
          required: false,
          content: json({
            type: 'object',
            properties: { filter: schemaRef('Filter'), authField: schemaRef('AuthField') },
            additionalProperties: false,
          }),
        },
        responses: { 204: { description: 'Deleted' }, default: PROBLEM },
      },
    },
  };
}
