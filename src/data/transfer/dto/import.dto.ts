import { AccessRulesDocumentDto } from '../../access/dto/access-rules.dto';
import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { OptionalField } from '../../../common/dto';
import { ApiSchemaPatch } from '../../../common/http/openapi';
import { AuthFieldProperty } from '../../items/dto/data-item.dto';
import { COLLECTION_NAME_PATTERN } from '../../query/data.constants';
import {
  DATA_VALUE,
  FIELD_NAME_SCHEMA_PATTERN,
  OWNER_FIELD_SCHEMA_PATTERN,
} from '../../query/json-guard';
import {
  ExportEndRecordDto,
  ExportFileChunkRecordDto,
  ExportFileRecordDto,
  ManifestExpiryDto,
  ManifestSearchDto,
} from './transfer.dto';
import { SchemaErrorDto } from '../../rules/schema/dto/collection-schema.dto';

/** POST /import: how to write the lines. */
export class ImportQueryDto {
  /**
   * `insert`: an item whose `_id` exists is refused (409 DUPLICATE_ITEM), and a file whose id
   * exists (409 FILE_EXISTS); `upsert`: it is replaced (a file: deleted, then stored anew).
   */
  @OptionalField()
  @IsIn(['insert', 'upsert'])
  @ApiPropertyOptional({ enum: ['insert', 'upsert'], default: 'insert' })
  mode?: 'insert' | 'upsert';

  /** `true`: nothing is written; each line reports what would happen. */
  @OptionalField()
  @IsIn(['true', 'false'])
  @ApiPropertyOptional({ enum: ['true', 'false'], default: 'false' })
  dryRun?: 'true' | 'false';

  /** The owner field of the items (default `userId`), unless the manifest names one for their collection. */
  @AuthFieldProperty()
  authField?: string;

  /** A field whose value must not be taken in the caller's scope, as in POST /data/{c}; a manifest entry may name its own. */
  @OptionalField()
  @IsString()
  @MaxLength(256)
  @ApiPropertyOptional({ example: 'orderNumber', pattern: FIELD_NAME_SCHEMA_PATTERN })
  uniqueField?: string;
}

/** An index an import's manifest names (as an export lists it). */
export class ImportIndexDto {
  /** A name POST /data/{c}/index accepts, or the default name of its fields. */
  @ApiProperty({ example: 'status_1' })
  name!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', enum: [1, -1] },
    minProperties: 1,
    maxProperties: 5,
    example: { status: 1 },
  })
  fields!: Record<string, 1 | -1>;

  @ApiPropertyOptional({ default: false })
  unique?: boolean;
}

/** A collection an import's manifest names: created, with its indexes. */
/** A collection's schema in an import's manifest: `action` defaults to `error`. */
export class ImportSchemaDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { type: 'object', required: ['title'] },
  })
  schema!: Record<string, unknown>;

  @ApiPropertyOptional({ enum: ['error', 'warn'], default: 'error' })
  action?: 'error' | 'warn';
}

export class ImportCollectionDto {
  @ApiProperty({ example: 'orders', pattern: COLLECTION_NAME_PATTERN.source })
  name!: string;

  /** Created when missing (root and team keys); `_id_` is every collection's already. */
  @ApiPropertyOptional({ type: [ImportIndexDto] })
  indexes?: ImportIndexDto[];

  /** The owner field of this collection's items (else the query's `authField`). */
  @ApiPropertyOptional({ example: 'userId', pattern: OWNER_FIELD_SCHEMA_PATTERN })
  authField?: string;

  /** The uniqueField of this collection's items (else the query's). */
  @ApiPropertyOptional({ example: 'orderNumber', pattern: FIELD_NAME_SCHEMA_PATTERN })
  uniqueField?: string;

  /**
   * The collection's schema (root and team keys; a sub key's manifest may name only the one the
   * collection has): checked when the manifest is read, set at the end record, after the items.
   */
  @ApiPropertyOptional({ type: ImportSchemaDto })
  schema?: ImportSchemaDto;

  /** The collection's expiry rule, under the same rules as `schema`. */
  @ApiPropertyOptional({ type: ManifestExpiryDto })
  expiry?: ManifestExpiryDto;

  /**
   * The collection's access rules (docs/data.md, "Access rules"), under the same rules as
   * `schema`: a sub key's manifest may name only the ones the collection has (the defaults when
   * it has none). Left out, a collection the import creates has the defaults.
   */
  @ApiPropertyOptional({ type: AccessRulesDocumentDto })
  access?: AccessRulesDocumentDto;

  /**
   * The collection's search configuration (docs/data.md, "Search"), under the same rules as
   * `schema`, checked as PUT /data/{c}/search checks it (400 VALIDATION_FAILED, PROTECTED_FIELD)
   * and set last at the end record (its index slot: 409 INDEX_QUOTA_EXCEEDED there); the build of
   * the imported items' words then starts. One equal to the collection's is left as it is.
   */
  @ApiPropertyOptional({ type: ManifestSearchDto })
  search?: ManifestSearchDto;
}

/**
 * A manifest as an import reads it: an export's (its other members are ignored), or one written
 * by hand naming the collections to create.
 */
@ApiSchemaPatch({ additionalProperties: true })
export class ImportManifestDto {
  @ApiProperty({ enum: ['manifest'] })
  type!: 'manifest';

  /** Format 1 only: a manifest of another format is refused on its line. */
  @ApiProperty({ enum: [1] })
  format!: 1;

  @ApiProperty({ type: [ImportCollectionDto] })
  collections!: ImportCollectionDto[];
}

/** An item to write: `_id`, `_createdAt` and `_updatedAt` are kept when present. */
@ApiSchemaPatch({ additionalProperties: true })
export class ImportItemRecordDto {
  @ApiProperty({ enum: ['item'] })
  type!: 'item';

  /** When present, the request's branch (an account export's lines name theirs). */
  @ApiPropertyOptional({ example: '' })
  branch?: string;

  @ApiProperty({ example: 'orders', pattern: COLLECTION_NAME_PATTERN.source })
  collection!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: DATA_VALUE,
    example: { _id: 'order-1001', total: 42.5, _createdAt: '2026-01-05T10:00:00.000Z' },
  })
  item!: Record<string, unknown>;
}

/** Any line of an import's body. */
export const IMPORT_LINE = {
  oneOf: [
    { $ref: getSchemaPath(ImportManifestDto) },
    { $ref: getSchemaPath(ImportItemRecordDto) },
    { $ref: getSchemaPath(ExportFileRecordDto) },
    { $ref: getSchemaPath(ExportFileChunkRecordDto) },
    { $ref: getSchemaPath(ExportEndRecordDto) },
  ],
  description:
    'NDJSON, each line one of these records: an export, or item lines alone (a manifest and an end are optional); a file line is followed by its chunk lines, n = 0, 1, … up to its size',
};

/** The result of one input line. */
@ApiSchemaPatch({ additionalProperties: true })
export class ImportResultLineDto {
  @ApiProperty({ enum: ['result'] })
  type!: 'result';

  /** The input line, counting from 1. */
  @ApiProperty({ example: 2 })
  line!: number;

  /**
   * 201 created, 200 replaced (an item, a file) or accepted (a manifest, an end); 202 a file's
   * line before its last one (the file's outcome is the last line's: 201, 200 or its failure);
   * 424 FILE_NOT_IMPORTED a line of a file that failed on an earlier line; otherwise what the
   * same item would have got from POST /data/{collection}, or the file from POST /files.
   */
  @ApiProperty({ example: 201 })
  status!: number;

  @ApiPropertyOptional({ example: 'DUPLICATE_ITEM' })
  code?: string;

  @ApiPropertyOptional()
  detail?: string;

  /** The item or file written (or, in a dry run, that would be). */
  @ApiPropertyOptional({ example: '665f1c2a9b1e8a0012345678' })
  _id?: string;

  /**
   * Where the item breaks its collection's schema when the schema's action is `warn` (it was
   * written); under `error` the line is a 422 SCHEMA_VIOLATION with `errors` instead.
   */
  @ApiPropertyOptional({ type: [SchemaErrorDto] })
  warnings?: SchemaErrorDto[];
}

/** The last line of an import's response. */
export class ImportTotalsDto {
  @ApiProperty({ enum: ['totals'] })
  type!: 'totals';

  /** `complete`: every line was read; `stopped`: the import ended at `stoppedAt` (see `code`). */
  @ApiProperty({ enum: ['complete', 'stopped'] })
  outcome!: 'complete' | 'stopped';

  @ApiProperty()
  dryRun!: boolean;

  @ApiProperty({ example: 1252 })
  lines!: number;

  @ApiProperty({ example: 1250 })
  created!: number;

  @ApiProperty({ example: 0 })
  replaced!: number;

  @ApiProperty({ example: 0 })
  failed!: number;

  /**
   * Files whose chunk lines stopped before their last byte (another record or the end of the
   * body came first): none of them was stored. Absent when none.
   */
  @ApiPropertyOptional({ example: 1 })
  incompleteFiles?: number;

  @ApiPropertyOptional({ example: 731 })
  stoppedAt?: number;

  @ApiPropertyOptional({ example: 'DATABASE_UNAVAILABLE' })
  code?: string;

  @ApiPropertyOptional()
  detail?: string;
}

/** Any line of an import's response. */
export const IMPORT_RESULT_LINE = {
  oneOf: [{ $ref: getSchemaPath(ImportResultLineDto) }, { $ref: getSchemaPath(ImportTotalsDto) }],
  description: 'NDJSON: a result line per input line, in order, then the totals',
};
