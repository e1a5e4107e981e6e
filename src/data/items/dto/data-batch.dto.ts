import { FieldErrorDto } from '../../../common/errors';
import { SchemaErrorDto } from '../../rules/schema/dto/collection-schema.dto';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsString, MaxLength } from 'class-validator';
import { OptionalField } from '../../../common/dto';
import { ApiSchemaPatch } from '../../../common/http/openapi';
import { AbsentBodyAllowed, FreeFormMember } from '../../../common/http/validation';
import {
  DATA_VALUE,
  DOCUMENT_MEMBER,
  DOCUMENTS_MEMBER,
  FIELD_NAME_SCHEMA_PATTERN,
  FILTER_MEMBER,
} from '../../query/json-guard';
import { AuthFieldProperty, BODY_FILTER_CONDITION } from './data-item.dto';

/** Body of POST /data/{c}/bulk. */
export class BulkCreateDataItemsDto {
  /** The items, each as `item` of POST /data/{collection}; 1 to BULK_MAX_ITEMS (default 500). */
  @IsDefined()
  @FreeFormMember(DOCUMENTS_MEMBER)
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: DATA_VALUE },
    minItems: 1,
    maxItems: 500,
    example: [
      { _id: 'order-1001', orderNumber: 'A-1001', total: 42.5 },
      { orderNumber: 'A-1002', total: 7 },
    ],
  })
  items!: unknown;

  /** As in POST /data/{collection}, for every item. */
  @OptionalField()
  @IsString()
  @MaxLength(256)
  @ApiPropertyOptional({ example: 'orderNumber', pattern: FIELD_NAME_SCHEMA_PATTERN })
  uniqueField?: string;

  /** The owner field (default `userId`). */
  @AuthFieldProperty()
  authField?: string;
}

@ApiSchemaPatch({
  additionalProperties: true,
  description:
    "The problem the item would have got alone: its code, detail, errors and extensions (e.g. a DUPLICATE_ITEM's existingId)",
})
export class BulkItemErrorDto {
  @ApiProperty({ example: 'DUPLICATE_ITEM' })
  code!: string;

  @ApiProperty({ example: "An item with this value of 'orderNumber' already exists." })
  detail!: string;

  /** The offending fields; for SCHEMA_VIOLATION each also has `pointer` and `keyword`. */
  @ApiPropertyOptional({ type: [FieldErrorDto] })
  errors?: FieldErrorDto[];
}

export class BulkItemResultDto {
  /** The item's position in `items`. */
  @ApiProperty({ example: 0 })
  index!: number;

  /** What POST /data/{collection} would have answered for this item alone: 200, or the error's status. */
  @ApiProperty({ example: 200 })
  status!: number;

  /** The created item's id (status 200). */
  @ApiPropertyOptional({ example: 'order-1001' })
  _id?: string;

  /** Why the item was not created (any other status); a problem's code, detail, errors and extensions such as existingId. */
  @ApiPropertyOptional({ type: BulkItemErrorDto })
  error?: BulkItemErrorDto;

  /** Created, but breaking its collection's schema, whose action is `warn`: where and why. */
  @ApiPropertyOptional({ type: [SchemaErrorDto] })
  warnings?: SchemaErrorDto[];
}

export class BulkCreateResultDto {
  /** One result per item, in the order of `items`. */
  @ApiProperty({ type: [BulkItemResultDto] })
  results!: BulkItemResultDto[];

  @ApiProperty({ example: 1 })
  created!: number;

  @ApiProperty({ example: 1 })
  failed!: number;
}

/** Body of DELETE /data/{c}. */
@AbsentBodyAllowed()
export class DeleteDataItemsDto {
  /**
   * The items to delete: conditions like the `filter` of DELETE /data/{c}/{indexName}/{indexValue};
   * at least one.
   */
  @IsDefined()
  @FreeFormMember(FILTER_MEMBER)
  @ApiProperty({
    type: 'object',
    additionalProperties: BODY_FILTER_CONDITION,
    minProperties: 1,
    example: { status: 'cancelled', total: { lt: 10 } },
  })
  filter!: unknown;

  /** true: every matching item; absent or false: exactly one (404 when none, 409 when several). */
  @OptionalField()
  @IsBoolean()
  @ApiPropertyOptional({ example: true, default: false })
  multi?: boolean;

  /** The owner field (default `userId`). */
  @AuthFieldProperty()
  authField?: string;
}

/** Body of PUT /data/{c}. */
export class UpdateDataItemsDto extends DeleteDataItemsDto {
  /** Field → new value (`$set`), as in PUT /data/{c}/{indexName}/{indexValue}. */
  @IsDefined()
  @FreeFormMember(DOCUMENT_MEMBER)
  @ApiProperty({
    type: 'object',
    additionalProperties: DATA_VALUE,
    minProperties: 1,
    example: { status: 'archived' },
  })
  values!: unknown;
}

export class UpdateManyResultDto {
  @ApiProperty({ example: 12 })
  matched!: number;

  @ApiProperty({ example: 12 })
  modified!: number;
}

export class DeleteManyResultDto {
  @ApiProperty({ example: 12 })
  deleted!: number;
}
