import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { OptionalField } from '../../../../common/dto';
import { SCHEMA_ACTIONS, type SchemaAction } from '../../collection-rules';
import { AuthFieldProperty } from '../../../items/dto/data-item.dto';
import { DRAFT_2020_12 } from '../schema-document';

const EXAMPLE_SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    status: { enum: ['open', 'done'] },
    due: { type: 'string', format: 'date-time' },
  },
  required: ['title', 'status'],
  additionalProperties: false,
};

export class PutCollectionSchemaDto {
  /**
   * A JSON Schema (draft 2020-12) of an item's own fields: `_id`, `_createdAt`, `_updatedAt`
   * and the owner field are the service's. `$ref` only inside the schema; `pattern` in RE2
   * syntax (linear time: no backreferences, no lookaround); at most SCHEMA_MAX_BYTES and
   * SCHEMA_MAX_DEPTH. A keyword or format the service does not support is a 400 naming it.
   */
  @IsObject()
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: EXAMPLE_SCHEMA,
    externalDocs: { url: DRAFT_2020_12, description: 'JSON Schema draft 2020-12' },
  })
  schema!: Record<string, unknown>;

  /** `error`: a write that breaks the schema is refused (422); `warn`: it is written, with a `Schema-Warnings` header. */
  @OptionalField()
  @IsIn(SCHEMA_ACTIONS)
  @ApiPropertyOptional({ enum: SCHEMA_ACTIONS, default: 'error' })
  action?: SchemaAction;
}

export class CollectionSchemaDto {
  @ApiProperty({ type: 'object', additionalProperties: true, example: EXAMPLE_SCHEMA })
  schema!: Record<string, unknown>;

  @ApiProperty({ enum: SCHEMA_ACTIONS, example: 'error' })
  action!: SchemaAction;

  /** When the schema was last put. */
  @ApiProperty({ type: String, format: 'date-time', example: '2026-11-26T10:00:00.000Z' })
  changedAt!: string;
}

export class SchemaErrorDto {
  /** JSON Pointer (RFC 6901) to the value in the item's own fields (`''`: the item). */
  @ApiProperty({ example: '/status' })
  pointer!: string;

  @ApiProperty({ example: 'enum' })
  keyword!: string;

  @ApiProperty({ example: 'must be equal to one of the allowed values' })
  message!: string;
}

export class SchemaViolationSampleDto {
  @ApiProperty({ example: '665f1b2c9d3e4a0012345678' })
  _id!: string;

  @ApiProperty({ type: [SchemaErrorDto] })
  errors!: SchemaErrorDto[];
}

export class SchemaViolationsDto {
  /** Items read by this request (at most `limit`). */
  @ApiProperty({ example: 100 })
  checked!: number;

  /** Of those, the items that do not follow the schema. */
  @ApiProperty({ example: 2 })
  violating!: number;

  /** The first violating items of this page (at most SCHEMA_MAX_ERRORS, 20 by default) with their errors. */
  @ApiProperty({ type: [SchemaViolationSampleDto] })
  sample!: SchemaViolationSampleDto[];

  /** The `_id` to pass as `after` for the next page; absent when every item was read. */
  @ApiPropertyOptional({ example: '665f1b2c9d3e4a0012345678' })
  next?: string;
}

const PAGE_LIMIT = /^([1-9][0-9]?|[1-4][0-9]{2}|500)$/;

/** GET /data/{c}/schema-violations: one page of items, in `_id` order. */
export class SchemaViolationsQueryDto {
  /** Items to read (1–500). */
  @OptionalField()
  @IsString()
  @Matches(PAGE_LIMIT, { message: 'limit must be 1 to 500' })
  @ApiPropertyOptional({ type: String, pattern: PAGE_LIMIT.source, default: '100' })
  limit?: string;

  /** `next` of the previous page: read the items after this `_id`. */
  @OptionalField()
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  @ApiPropertyOptional({ example: '665f1b2c9d3e4a0012345678' })
  after?: string;

  /** The owner field of the items (default `userId`): the service's, so not checked. */
  @AuthFieldProperty()
  authField?: string;
}
