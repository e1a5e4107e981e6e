import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { OptionalField } from '../../../common/dto';
import { ApiSchemaPatch } from '../../../common/http/openapi';
import { MAX_INDEX_FIELDS } from '../../query/data.constants';
import { FIELD_PATH_SCHEMA_PATTERN } from '../../query/json-guard';

export const INDEX_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/**
 * Exactly one of `field` (with an optional `sort`) and `fields`. Each branch names its member
 * under `properties` too (adding no constraint): generated clients type a `required` member only
 * when the branch lists it, and would otherwise accept `{}`.
 */
@ApiSchemaPatch({
  oneOf: [
    { required: ['field'], properties: { field: {} }, not: { required: ['fields'] } },
    {
      required: ['fields'],
      properties: { fields: {} },
      not: { anyOf: [{ required: ['field'] }, { required: ['sort'] }] },
    },
  ],
})
export class CreateDataIndexDto {
  /** One field (dotted paths address nested fields); use `fields` for a compound index. */
  @OptionalField()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  @ApiPropertyOptional({ example: 'status', pattern: FIELD_PATH_SCHEMA_PATTERN })
  field?: string;

  /** Direction of `field`. */
  @OptionalField()
  @IsIn(['asc', 'desc'])
  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'asc' })
  sort?: 'asc' | 'desc';

  /** Compound index: field → 1 (ascending) or -1 (descending), at most 5 fields, in order. */
  @OptionalField()
  @Transform(({ obj }) => (obj as Record<string, unknown>).fields)
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'integer', enum: [1, -1] },
    minProperties: 1,
    maxProperties: MAX_INDEX_FIELDS,
    example: { userId: 1, _createdAt: -1 },
  })
  fields?: unknown;

  /** Refuse two items with the same values of the indexed fields. */
  @OptionalField()
  @IsBoolean()
  @ApiPropertyOptional({ default: false })
  unique?: boolean;

  /** Index name; default MongoDB's (`status_1`, `userId_1__createdAt_-1`). */
  @OptionalField()
  @IsString()
  @Matches(INDEX_NAME_PATTERN, {
    message: 'name must be 1-128 letters, digits, _, . or - (not starting with . or -)',
  })
  @ApiPropertyOptional({ example: 'status_1', pattern: INDEX_NAME_PATTERN.source })
  name?: string;
}

export class DeleteDataIndexDto {
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  // The _id index cannot be removed (400 PROTECTED_INDEX).
  @ApiProperty({ example: 'status_1', not: { enum: ['_id_'] } })
  name!: string;
}

export class DataIndexDto {
  @ApiProperty({ example: 'status_1' })
  name!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', enum: [1, -1] },
    example: { status: 1 },
  })
  fields!: Record<string, 1 | -1>;

  @ApiProperty({ example: false })
  unique!: boolean;
}

export class DataCollectionDto {
  @ApiProperty({ example: 'orders' })
  name!: string;

  /** The collection's indexes, `_id_` included. */
  @ApiProperty({ type: [DataIndexDto] })
  indexes!: DataIndexDto[];
}

export class DataCollectionStatsDto {
  /** Items, from the collection's statistics (no scan); MongoDB may lag after an unclean shutdown. */
  @ApiProperty({ example: 1250 })
  count!: number;

  /** Indexes, `_id_` included. */
  @ApiProperty({ example: 3 })
  indexes!: number;

  /** Size of the items as the database accounts it (uncompressed BSON on MongoDB). */
  @ApiProperty({ example: 524288 })
  sizeBytes!: number;
}
