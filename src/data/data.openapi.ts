import { applyDecorators } from '@nestjs/common';
import { ApiParam, ApiQuery } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { COLLECTION_NAME_RULE } from './query/data.constants';
import { MAX_PREFIX_LENGTH, PREFIX_SCHEMA_PATTERN } from './query/filter-operators';
import { MAX_PROJECTION_FIELDS } from './query/projection';
import {
  FIELDS_SCHEMA_PATTERN,
  FIELD_PATH_SCHEMA_PATTERN,
  SORT_SCHEMA_PATTERN,
  MAX_FIELD_NAME_LENGTH,
  OWNER_FIELD_SCHEMA_PATTERN,
} from './query/json-guard';
import {
  ITEM_FIELDS_SCHEMA,
  ITEM_FILTER_SCHEMA,
  sharedSchema,
} from '../common/http/openapi-schemas';

/** OpenAPI descriptions shared by the data routes. */

const OPERAND: SchemaObject = { type: 'string' };

/** A `prefix` operand, in query strings and body filters alike. */
export const PREFIX_OPERAND: SchemaObject = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_PREFIX_LENGTH,
  pattern: PREFIX_SCHEMA_PATTERN,
};

/** The operators of one field in a query string: `filter[k][op]=v`. */
const FILTER_OPERATORS_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    eq: OPERAND,
    ne: OPERAND,
    gt: OPERAND,
    gte: OPERAND,
    lt: OPERAND,
    lte: OPERAND,
    in: { type: 'string', minLength: 1, description: 'Comma-separated values' },
    nin: { type: 'string', minLength: 1, description: 'Comma-separated values' },
    exists: { type: 'string', enum: ['true', 'false'] },
    prefix: PREFIX_OPERAND,
  },
  additionalProperties: false,
  minProperties: 1,
};

export const CollectionParam = () =>
  ApiParam({
    name: 'collection',
    description: `Collection name: ${COLLECTION_NAME_RULE} (per tenant and branch)`,
    schema: { type: 'string', pattern: COLLECTION_NAME_RULE },
    example: 'orders',
  });

export const ItemParams = () =>
  applyDecorators(
    CollectionParam(),
    ApiParam({
      name: 'indexName',
      description: '`_id`, or a field (dotted path) whose value selects the item',
      schema: {
        type: 'string',
        pattern: FIELD_PATH_SCHEMA_PATTERN,
        maxLength: MAX_FIELD_NAME_LENGTH,
      },
      example: '_id',
    }),
    ApiParam({
      name: 'indexValue',
      description:
        'The value; for fields "5" matches "5" and 5, "true" true, "null" null (URL-encode it)',
      example: 'order-1001',
    }),
  );

export const FilterQueries = () =>
  applyDecorators(
    ApiQuery({
      name: 'authField',
      required: false,
      description: 'Owner field (default userId); sub keys only ever see items they own',
      schema: {
        type: 'string',
        pattern: OWNER_FIELD_SCHEMA_PATTERN,
        maxLength: MAX_FIELD_NAME_LENGTH,
      },
      example: 'userId',
    }),
    ApiQuery({
      name: 'filter',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: sharedSchema(ITEM_FILTER_SCHEMA, {
        type: 'object',
        additionalProperties: { oneOf: [{ type: 'string' }, FILTER_OPERATORS_SCHEMA] },
      }),
      description:
        'Conditions on fields (dotted paths), `$and`-ed: `filter[k]=v` (also `k=v`) is equality, ' +
        '`filter[k][op]=v` (also `k[op]=v`) applies an operator: eq, ne, gt, gte, lt, lte, in, ' +
        'nin, exists, prefix. Equality values match their string and the number, boolean or ' +
        'null they spell ("5" matches "5" and 5); a range value that spells a number compares ' +
        'with numbers, any other with strings; `_createdAt`/`_updatedAt` take RFC 3339 ' +
        'timestamps. `in`/`nin` take a comma-separated list or repeated parameters (one value ' +
        'each). At most FILTER_MAX_CONDITIONS conditions (default 20) and FILTER_MAX_IN_VALUES ' +
        'values per list (default 100). See docs/data.md.',
      example: { status: 'open', total: { gte: '100' } },
    }),
    ApiQuery({
      name: 'existsFilter',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string', enum: ['true', 'false'] } },
      description: '`existsFilter[k]=true|false`: the field is present or absent',
      example: { paidAt: 'false' },
    }),
  );

/** `fields`: the projection of a list or a single item. */
export const FieldsQuery = () =>
  ApiQuery({
    name: 'fields',
    required: false,
    description:
      'Fields to return (`fields=total,customer.name`), or, each with `-`, fields to leave out ' +
      '(`fields=-notes`); `_id` is always returned, unknown fields are absent. Listed fields ' +
      `must not overlap (\`a\` and \`a.b\`); at most ${MAX_PROJECTION_FIELDS}. A projected item's ` +
      "ETag differs from the whole item's: send the whole item's ETag in If-Match.",
    schema: sharedSchema(ITEM_FIELDS_SCHEMA, { type: 'string', pattern: FIELDS_SCHEMA_PATTERN }),
    example: 'total,status',
  });

export const ListQueries = () =>
  applyDecorators(
    FilterQueries(),
    FieldsQuery(),
    ApiQuery({
      name: 'sort',
      required: false,
      description:
        'Fields (dotted paths) to sort by, comma-separated; `-` makes a field descending, no sign ' +
        'ascending (`sort=status,-total`). A single field without a sign follows sortOrder. Ties ' +
        'are broken by _id (in the direction of the last field); at most 5 fields.',
      schema: {
        type: 'string',
        pattern: SORT_SCHEMA_PATTERN,
        maxLength: 5 * (MAX_FIELD_NAME_LENGTH + 2),
        default: '_id',
      },
      example: 'status,-total',
    }),
    ApiQuery({
      name: 'sortOrder',
      required: false,
      description:
        'Direction of a single unsigned sort field; refused with a signed or multi-field sort',
      schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    }),
    ApiQuery({
      name: 'after',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      description:
        'Keyset cursor: `after[<sort field>]=v` for every sort field (+ `after[_id]=<id>` as tie-breaker): items after that position in the sort order. Numbers compare as numbers, _createdAt/_updatedAt as RFC 3339 dates. The `Link` header of a page carries the next cursor.',
      example: { total: '40', _id: '665f1c2a9b1e8a0012345679' },
    }),
    ApiQuery({
      name: 'before',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      description:
        '`before[<sort field>]=v` for every sort field (+ `before[_id]`): items before that position in the sort order',
    }),
  );

/** Where the feed stood when a list was read (docs/events.md, "Live queries"). */
export const FEED_POSITION_HEADER = 'Feed-Position';
export const FEED_POSITION = {
  [FEED_POSITION_HEADER]: {
    description:
      'The id of the newest event of the namespace when the list was read (absent with EVENTS_ENABLED=false): open `GET /events/stream` with `after` (or `Last-Event-ID`) set to it, and the same filter, to follow the list without missing a change',
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$' },
    required: false,
  },
};
