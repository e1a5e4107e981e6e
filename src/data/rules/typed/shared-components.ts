/**
 * The components every collection's paths share in the typed document: the query and header
 * parameters of the item routes, the problem answer, body filters and the security schemes.
 */
import { API_KEY_SCHEME, BEARER_SCHEME } from '../../../common/http/openapi-shared';
import { MAX_PREFIX_LENGTH } from '../../query/filter-operators';
import {
  MAX_FIELD_NAME_LENGTH,
  OWNER_FIELD_SCHEMA_PATTERN,
  SORT_SCHEMA_PATTERN,
} from '../../query/json-guard';

type Json = Record<string, unknown>;

const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

const scalar = { type: ['string', 'number', 'boolean', 'null'] };
const rangeOperand = { type: ['string', 'number'] };
const valueList = { type: 'array', items: scalar, minItems: 1 };
const cursor = {
  type: 'object',
  additionalProperties: { type: 'string' },
};

/** What every collection's paths share: parameters, the problem answer, filters, security. */
export function sharedComponents(limits: { listDefault: number; listMax: number }): Json {
  const query = (name: string, schema: Json, description: string, deep = false): Json => ({
    name,
    in: 'query',
    required: false,
    description,
    schema,
    ...(deep ? { style: 'deepObject', explode: true } : {}),
  });
  return {
    securitySchemes: {
      [API_KEY_SCHEME]: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      [BEARER_SCHEME]: { type: 'http', scheme: 'bearer' },
    },
    parameters: {
      id: {
        name: 'id',
        in: 'path',
        required: true,
        schema: { type: 'string', minLength: 1, maxLength: 128 },
      },
      authField: query('authField', schemaRef('AuthField'), 'The owner field (default userId)'),
      filter: query(
        'filter',
        {
          type: 'object',
          additionalProperties: {
            anyOf: [
              { type: 'string' },
              {
                type: 'object',
                propertyNames: {
                  enum: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', 'prefix'],
                },
                additionalProperties: { type: 'string' },
              },
            ],
          },
        },
        '`filter[k]=v` (equality) and `filter[k][op]=v` (eq, ne, gt, gte, lt, lte, in, nin, exists, prefix); see docs/data.md',
        true,
      ),
      existsFilter: query(
        'existsFilter',
        { type: 'object', additionalProperties: { type: 'string', enum: ['true', 'false'] } },
        '`existsFilter[k]=true|false`: the field is present or absent',
        true,
      ),
      sort: query(
        'sort',
        { type: 'string', pattern: SORT_SCHEMA_PATTERN, default: '_id' },
        'Fields to sort by, comma-separated; `-` descending (`sort=status,-total`)',
      ),
      sortOrder: query(
        'sortOrder',
        { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
        'Direction of a single unsigned sort field',
      ),
      limit: query(
        'limit',
        { type: 'integer', minimum: 1, maximum: limits.listMax, default: limits.listDefault },
        'Items per page',
      ),
      after: query(
        'after',
        cursor,
        'Keyset cursor: `after[<sort field>]=v` for every sort field',
        true,
      ),
      before: query('before', cursor, '`before[<sort field>]=v` for every sort field', true),
      ifMatch: {
        name: 'If-Match',
        in: 'header',
        required: false,
        description: 'Write only at this ETag (or `*`); 412 otherwise',
        schema: { type: 'string' },
      },
      ifNoneMatch: {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: '304 without a body when it names the current ETag',
        schema: { type: 'string' },
      },
    },
    responses: {
      Problem: {
        description: 'An RFC 9457 problem with a stable `code`',
        content: { 'application/problem+json': { schema: schemaRef('Problem') } },
      },
    },
    schemas: {
      AuthField: {
        type: 'string',
        pattern: OWNER_FIELD_SCHEMA_PATTERN,
        maxLength: MAX_FIELD_NAME_LENGTH,
      },
      Filter: {
        type: 'object',
        description:
          'Conditions on fields (dotted paths), `$and`-ed: a value is equality; an object applies operators',
        additionalProperties: {
          anyOf: [
            scalar,
            {
              type: 'object',
              properties: {
                eq: scalar,
                ne: scalar,
                gt: rangeOperand,
                gte: rangeOperand,
                lt: rangeOperand,
                lte: rangeOperand,
                in: valueList,
                nin: valueList,
                exists: { type: 'boolean' },
                prefix: { type: 'string', minLength: 1, maxLength: MAX_PREFIX_LENGTH },
              },
              additionalProperties: false,
              minProperties: 1,
            },
          ],
        },
      },
      Problem: {
        type: 'object',
        required: ['type', 'title', 'status', 'detail', 'code', 'traceId'],
        properties: {
          type: { type: 'string' },
          title: { type: 'string' },
          status: { type: 'integer' },
          detail: { type: 'string' },
          instance: { type: 'string' },
          code: { type: 'string' },
          traceId: { type: 'string' },
          errors: {
            type: 'array',
            description:
              'Invalid fields (`field`), or where an item breaks the schema (`pointer`, `keyword`)',
            items: {
              type: 'object',
              properties: {
                field: { type: 'string' },
                pointer: { type: 'string' },
                keyword: { type: 'string' },
                message: { type: 'string' },
              },
            },
          },
        },
        additionalProperties: true,
      },
    },
  };
}
