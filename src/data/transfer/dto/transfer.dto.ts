import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsString, Matches, MaxLength } from 'class-validator';
import { OptionalField } from '../../../common/dto';
import { ApiSchemaPatch } from '../../../common/http/openapi';
import { DataIndexDto } from '../../indexes/dto/data-index.dto';
import { DataItemDto, AuthFieldProperty } from '../../items/dto/data-item.dto';

const NAME = '[A-Za-z][A-Za-z0-9_-]{0,63}';
const COLLECTION_LIST = `^${NAME}(,${NAME})*$`;
/** `<collection>/<_id>`: an item id has 1-128 characters and no controls. */
const RESUME_POINT = `^${NAME}/[^\\u0000-\\u001F\\u007F-\\u009F]{1,128}$`;

/** GET /export and the account exports: what to export. */
export class ExportQueryDto {
  /** Only these collections (comma-separated names); each must exist. Default: all. */
  @OptionalField()
  @IsString()
  @Matches(new RegExp(COLLECTION_LIST), {
    message: 'collections must be collection names, comma-separated',
  })
  @ApiPropertyOptional({ pattern: COLLECTION_LIST, example: 'orders,customers' })
  collections?: string;

  /**
   * Resume a cut download after this item: `<collection>/<_id>` of the last complete item line
   * received. The response holds the items after it (and a new manifest and end).
   */
  @OptionalField()
  @IsString()
  @MaxLength(64 + 1 + 128 * 2)
  @Matches(new RegExp(RESUME_POINT, 'u'), { message: 'after must be <collection>/<_id>' })
  @ApiPropertyOptional({ pattern: RESUME_POINT, example: 'orders/665f1c2a9b1e8a0012345678' })
  after?: string;

  /** A sub key's export holds the items whose owner field (this, default `userId`) is its own. */
  @AuthFieldProperty()
  authField?: string;
}

/** A collection's schema as a manifest lists it: GET /data/{c}/schema without its time. */
export class ManifestSchemaDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { type: 'object', required: ['title'] },
  })
  schema!: Record<string, unknown>;

  @ApiProperty({ enum: ['error', 'warn'], example: 'error' })
  action!: 'error' | 'warn';
}

/** A collection's expiry rule as a manifest lists it: GET /data/{c}/expiry without its time. */
export class ManifestExpiryDto {
  @ApiProperty({ example: '_createdAt' })
  field!: string;

  @ApiProperty({ example: 2592000, minimum: 1 })
  afterSeconds!: number;
}

export class ManifestCollectionDto {
  @ApiProperty({ example: 'orders' })
  name!: string;

  /** The collection's indexes but `_id_`. */
  @ApiProperty({ type: [DataIndexDto] })
  indexes!: DataIndexDto[];

  /** Its items when the export began (a sub key's export: the ones it owns). */
  @ApiProperty({ example: 1250 })
  count!: number;

  /** Its JSON Schema, when it has one (docs/data.md, "Collection schemas"). */
  @ApiPropertyOptional({ type: ManifestSchemaDto })
  schema?: ManifestSchemaDto;

  /** Its expiry rule, when it has one (docs/data.md, "Expiry"). */
  @ApiPropertyOptional({ type: ManifestExpiryDto })
  expiry?: ManifestExpiryDto;
}

export class ExportNamespaceDto {
  @ApiProperty({ enum: ['user', 'team'] })
  kind!: 'user' | 'team';

  @ApiProperty({ example: '' })
  branch!: string;
}

export class ExportOwnerDto {
  @ApiProperty({ example: 'userId' })
  field!: string;

  @ApiProperty({ example: 'acct-42' })
  value!: string;
}

/** What every manifest starts with: a namespace's export and an account's. */
export abstract class ManifestHeadDto {
  @ApiProperty({ enum: ['manifest'] })
  type!: 'manifest';

  /** The format version: it changes only when a reader of this one would misread a file. */
  @ApiProperty({ enum: [1] })
  format!: 1;

  @ApiProperty({ format: 'date-time' })
  exportedAt!: string;
}

/** The first line of an export. */
@ApiSchemaPatch({ additionalProperties: true })
export class ExportManifestDto extends ManifestHeadDto {
  @ApiProperty({ type: ExportNamespaceDto })
  namespace!: ExportNamespaceDto;

  /** A sub key's export: the owner field and value its items hold. */
  @ApiPropertyOptional({ type: ExportOwnerDto })
  owner?: ExportOwnerDto;

  /** The newest event when the export began: GET /events?after= this gives what changed since. Null when the change feed is off. */
  @ApiProperty({ type: String, nullable: true, example: '1042' })
  feedPosition!: string | null;

  /** A resumed export: the `after` it resumed after. */
  @ApiPropertyOptional({ example: 'orders/665f1c2a9b1e8a0012345678' })
  after?: string;

  @ApiProperty({ type: [ManifestCollectionDto] })
  collections!: ManifestCollectionDto[];
}

/** One item of an export, by collection then `_id`. */
@ApiSchemaPatch({ additionalProperties: true })
export class ExportItemRecordDto {
  @ApiProperty({ enum: ['item'] })
  type!: 'item';

  /** The branch (account exports, which span branches). */
  @ApiPropertyOptional({ example: '' })
  branch?: string;

  @ApiProperty({ example: 'orders' })
  collection!: string;

  @ApiProperty({ type: DataItemDto })
  item!: DataItemDto;
}

/** The last line of an export: a client that did not get it has an incomplete file. */
@ApiSchemaPatch({ additionalProperties: true })
export class ExportEndRecordDto {
  @ApiProperty({ enum: ['end'] })
  type!: 'end';

  /** The lines between the manifest and this one. */
  @ApiProperty({ example: 1250 })
  items!: number;

  /** SHA-256 (hex) of those lines, each with its `\n`, in order. */
  @ApiProperty({ pattern: '^[0-9a-f]{64}$' })
  sha256!: string;
}

/** Any line of a namespace export. */
export const EXPORT_LINE = {
  oneOf: [
    { $ref: getSchemaPath(ExportManifestDto) },
    { $ref: getSchemaPath(ExportItemRecordDto) },
    { $ref: getSchemaPath(ExportEndRecordDto) },
  ],
  description:
    'NDJSON: each line is one of these records — a manifest first, then item lines by collection and _id, then the end (docs/data.md, "Export and import")',
};
