/**
 * The components every collection's paths share in the typed document: the query and header
 * parameters of the item routes, the problem answer, body filters and the security schemes.
 */
import { API_KEY_SCHEME, BEARER_SCHEME } from '../../../common/http/openapi-shared';
import { MAX_PREFIX_LENGTH } from '../../query/filter-operators';
import {
  EXPAND_SCHEMA_PATTERN,
  MAX_FIELD_NAME_LENGTH,
  OWNER_FIELD_SCHEMA_PATTERN,
  SORT_SCHEMA_PATTERN,
} from '../../query/json-guard';
import { MAX_EXPANSIONS } from '../../expand/expand-request';
import { MAX_QUERY_WORDS, MAX_WORD_LENGTH } from '../../search/tokenizer';

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
      // On the lists of collections with a search configuration only: elsewhere `q` is a 400.
      q: query(
        'q',
        { type: 'string' },
        'Full-text search in the collection\'s search fields (docs/data.md, "Searching with q"): ' +
          'every word must be a word of the item (lower-cased, accents dropped, CJK characters one ' +
          'word each), the last one as its start (`q=red sho` finds "Red shoes"). No ranking, no ' +
          `match inside a word. At most ${MAX_QUERY_WORDS} words of at most ${MAX_WORD_LENGTH} ` +
          'characters (400). ANDed with the filters; sort and the keyset cursors work as without ' +
          'it. While the configuration is built: 409 SEARCH_BUILDING with Retry-After.',
      ),
      expand: query(
        'expand',
        { type: 'string', pattern: EXPAND_SCHEMA_PATTERN },
        'References to replace by the items they name (docs/data.md, "Expanding references"): ' +
          `\`path:collection\` pairs, comma-separated, at most ${MAX_EXPANSIONS} ` +
          '(`customer:customers,lines.product:products`). The string id (or each id of an array ' +
          'of ids) at the path becomes the item of that id in the named collection of the same ' +
          'namespace and branch, or `null` when there is none or the key may not read it. The ' +
          "item types here do not say so: an expanded field holds the named collection's item " +
          'type (or null), not the id its own schema describes. Expanded items are not expanded ' +
          'again; one query per expansion per page.',
      ),
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
