import { applyDecorators } from '@nestjs/common';
import { ApiParam, ApiQuery } from '@nestjs/swagger';
import { COLLECTION_NAME_RULE } from './data.constants';
import {
  FIELD_PATH_SCHEMA_PATTERN,
  MAX_FIELD_NAME_LENGTH,
  OWNER_FIELD_SCHEMA_PATTERN,
} from './json-guard';

/** OpenAPI descriptions shared by the data routes. */

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
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      description:
        'Equality filters `filter[k]=v`, also written `k=v` (dotted paths allowed). "5" matches "5" and 5, "true" true, "null" null.',
      example: { status: 'open' },
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

export const ListQueries = () =>
  applyDecorators(
    FilterQueries(),
    ApiQuery({
      name: 'sort',
      required: false,
      description: 'Field (dotted path) to sort by; ties are broken by _id',
      schema: {
        type: 'string',
        pattern: FIELD_PATH_SCHEMA_PATTERN,
        maxLength: MAX_FIELD_NAME_LENGTH,
        default: '_id',
      },
    }),
    ApiQuery({
      name: 'sortOrder',
      required: false,
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
        'Keyset cursor `after[<sort field>]=v` (+ `after[_id]=<id>` as tie-breaker): items after v in the sort order. Numbers compare as numbers, _createdAt/_updatedAt as RFC 3339 dates.',
      example: { total: '40', _id: '665f1c2a9b1e8a0012345679' },
    }),
    ApiQuery({
      name: 'before',
      required: false,
      style: 'deepObject',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string' } },
      description: '`before[<sort field>]=v` (+ `before[_id]`): items before v in the sort order',
    }),
  );
