import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsDefined, IsIn, IsString, MaxLength } from 'class-validator';
import { OptionalField } from '../../../common/dto';
import { ApiSchemaPatch } from '../../../common/http/openapi';
import { FreeFormMember } from '../../../common/http/validation';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { REVISION_FIELD, WORDS_FIELD } from '../../query/data.constants';
import { PREFIX_OPERAND } from '../../data.openapi';
import {
  DATA_VALUE,
  DOCUMENT_MEMBER,
  FIELD_NAME_SCHEMA_PATTERN,
  FILTER_MEMBER,
  OWNER_FIELD_SCHEMA_PATTERN,
} from '../../query/json-guard';

/** `authField` of a data body: a field name that is not the server's (default `userId`). */
export const AuthFieldProperty = () =>
  applyDecorators(
    OptionalField(),
    IsString(),
    MaxLength(256),
    ApiPropertyOptional({
      example: 'userId',
      default: 'userId',
      pattern: OWNER_FIELD_SCHEMA_PATTERN,
      // Stated explicitly: the swagger plugin reads @MaxLength only on the property itself.
      maxLength: 256,
    }),
  );

const SCALAR: SchemaObject = {
  anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
  nullable: true,
};
const RANGE_OPERAND: SchemaObject = { anyOf: [{ type: 'string' }, { type: 'number' }] };
const VALUE_LIST: SchemaObject = {
  type: 'array',
  items: SCALAR,
  minItems: 1,
  maxItems: 100,
  description: 'At most FILTER_MAX_IN_VALUES values (default 100)',
};

/** One field's condition in a body filter: a value (equality) or operators. */
export const BODY_FILTER_CONDITION: SchemaObject = {
  anyOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    {
      type: 'object',
      properties: {
        eq: SCALAR,
        ne: SCALAR,
        gt: RANGE_OPERAND,
        gte: RANGE_OPERAND,
        lt: RANGE_OPERAND,
        lte: RANGE_OPERAND,
        in: VALUE_LIST,
        nin: VALUE_LIST,
        exists: { type: 'boolean' },
        prefix: PREFIX_OPERAND,
      },
      additionalProperties: false,
      minProperties: 1,
    },
  ],
  nullable: true,
};

const ITEM_EXAMPLE = { _id: 'order-1001', userId: 'auth0|ada', total: 42.5, status: 'open' };

export class CreateDataItemDto {
  /**
   * The item: a JSON object. `_id` (string) is optional; `_createdAt`/`_updatedAt` are the
   * server's; `_revision` is reserved (at any depth).
   */
  @IsDefined()
  @FreeFormMember(DOCUMENT_MEMBER)
  @ApiProperty({
    type: 'object',
    additionalProperties: DATA_VALUE,
    example: { _id: 'order-1001', total: 42.5, status: 'open' },
  })
  item!: unknown;

  /** A field of `item` whose value must not exist yet in the caller's scope (409 otherwise). */
  @OptionalField()
  @IsString()
  @MaxLength(256)
  @ApiPropertyOptional({ example: 'orderNumber', pattern: FIELD_NAME_SCHEMA_PATTERN })
  uniqueField?: string;

  /** The owner field (default `userId`). */
  @AuthFieldProperty()
  authField?: string;

  /**
   * With uniqueField: `error` (default) answers 409 when the value is taken; `return` answers 200
   * with the item that holds it (find-or-create), `X-Item-Created: false`.
   */
  @OptionalField()
  @IsIn(['error', 'return'])
  @ApiPropertyOptional({ enum: ['error', 'return'], default: 'error' })
  onConflict?: 'error' | 'return';
}

/** Body of DELETE /data/{c}/{indexName}/{indexValue}; also the narrowing part of a PUT. */
export class DeleteDataItemDto {
  /**
   * Further conditions on fields (dotted paths), `$and`-ed: a value is equality (JSON types
   * kept; null matches a field that holds null); an object applies operators (names without `$`).
   */
  @OptionalField({ nullable: true })
  @FreeFormMember(FILTER_MEMBER)
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: BODY_FILTER_CONDITION,
    nullable: true,
    example: { status: 'cancelled', total: { lt: 10 } },
  })
  filter?: unknown;

  /** The owner field (default `userId`). */
  @AuthFieldProperty()
  authField?: string;
}

export class UpdateDataItemDto extends DeleteDataItemDto {
  /**
   * Field → new value (`$set`); `null` stores null. Not `_id`, `_createdAt`, `_updatedAt`;
   * `_revision` is reserved (at any depth).
   */
  @IsDefined()
  @FreeFormMember(DOCUMENT_MEMBER)
  @ApiProperty({
    type: 'object',
    additionalProperties: DATA_VALUE,
    minProperties: 1,
    example: { status: 'paid' },
  })
  values!: unknown;
}

/** The server's hidden fields, which no item answer holds. */
const HIDDEN_FIELDS_SCHEMA = {
  anyOf: [{ required: [REVISION_FIELD] }, { required: [WORDS_FIELD] }],
};

/**
 * A stored item: its fields plus `_id` and the server-managed timestamps. The server's revision
 * record (`_revision`) is never part of it: the item's ETag carries it.
 */
@ApiSchemaPatch({
  additionalProperties: true,
  not: HIDDEN_FIELDS_SCHEMA,
  description: `An item: the client's fields plus \`_id\`, \`_createdAt\` and \`_updatedAt\`. The server's revision record (\`${REVISION_FIELD}\`, a reserved field name) is never returned; the ETag header of single-item responses carries it. Nor is the word list of a collection with search (\`${WORDS_FIELD}\`, reserved too).`,
})
export class DataItemDto {
  @ApiProperty({ example: 'order-1001' })
  _id!: string;

  @ApiProperty({ format: 'date-time', example: '2026-01-05T10:00:00.000Z' })
  _createdAt!: string;

  @ApiProperty({ format: 'date-time', example: '2026-01-05T10:00:00.000Z' })
  _updatedAt!: string;

  [field: string]: unknown;
}

/**
 * An item read with `fields`: `_id` and the fields the projection keeps; the timestamps only
 * when it keeps them.
 */
@ApiSchemaPatch({
  additionalProperties: true,
  not: HIDDEN_FIELDS_SCHEMA,
  description:
    'An item read with `fields`: `_id` and the projected fields (`_createdAt`/`_updatedAt` only when projected).',
})
export class ProjectedDataItemDto {
  @ApiProperty({ example: 'order-1001' })
  _id!: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-01-05T10:00:00.000Z' })
  _createdAt?: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-01-05T10:00:00.000Z' })
  _updatedAt?: string;

  [field: string]: unknown;
}

export const DATA_ITEM_EXAMPLE = {
  ...ITEM_EXAMPLE,
  _createdAt: '2026-01-05T10:00:00.000Z',
  _updatedAt: '2026-01-05T10:00:00.000Z',
};

export class DataCountDto {
  @ApiProperty({ example: 12 })
  count!: number;
}

/**
 * Items as JSON: the stored BSON timestamps become RFC 3339 strings; the revision and the word
 * list (search) stay inside.
 * The revision is left out by a rest copy rather than a `delete`: deleting a key turns an object
 * into a dictionary, which JSON.stringify walks several times slower (a list renders hundreds).
 */
export function toItemJson(item: { _id: string; _createdAt: Date; _updatedAt: Date }): DataItemDto {
  const {
    [REVISION_FIELD]: _revision,
    [WORDS_FIELD]: _words,
    ...json
  } = item as typeof item & {
    [REVISION_FIELD]?: unknown;
    [WORDS_FIELD]?: unknown;
  };
  const fields = json as Record<string, unknown>;
  if (item._createdAt instanceof Date) fields._createdAt = item._createdAt.toISOString();
  if (item._updatedAt instanceof Date) fields._updatedAt = item._updatedAt.toISOString();
  return fields as unknown as DataItemDto;
}

/** A read answers whole items, or projected ones when the request names `fields`. */
export const ITEM_OR_PROJECTION = {
  anyOf: [{ $ref: getSchemaPath(DataItemDto) }, { $ref: getSchemaPath(ProjectedDataItemDto) }],
};

/** The request examples of POST /data/{collection}. */
export const CREATE_ITEM_EXAMPLES = {
  simple: { value: { item: { total: 42.5, status: 'open' } } },
  unique: {
    value: {
      item: { _id: 'order-1001', orderNumber: 'A-1001', total: 42.5 },
      uniqueField: 'orderNumber',
      authField: 'ownerId',
    },
  },
  findOrCreate: {
    value: {
      item: { orderNumber: 'A-1001', total: 42.5 },
      uniqueField: 'orderNumber',
      onConflict: 'return',
    },
  },
};
