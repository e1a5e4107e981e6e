import { CLIENT_PATH_SCHEMA_PATTERN } from '../../query/json-guard';
import { MIN_TOKEN_LENGTH } from '../../search/tokenizer';
import { AccessRulesDocumentDto } from '../../access/dto/access-rules.dto';
import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { OptionalField } from '../../../common/dto';
import { ApiSchemaPatch } from '../../../common/http/openapi';
import { DataIndexDto } from '../../indexes/dto/data-index.dto';
import { DataItemDto, AuthFieldProperty } from '../../items/dto/data-item.dto';

const NAME = '[A-Za-z][A-Za-z0-9_-]{0,63}';
const COLLECTION_LIST = `^${NAME}(,${NAME})*$`;
/**
 * `<collection>/<_id>` (an item id has 1-128 characters and no controls), or `~files/<file id>`
 * (`~` sorts after every collection name: the files come after the items).
 */
const RESUME_POINT = `^(${NAME}/[^\\u0000-\\u001F\\u007F-\\u009F]{1,128}|~files/[0-9a-f]{24})$`;

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
   * Resume a cut download after this item or file: `<collection>/<_id>` of the last complete
   * item line received, or `~files/<id>` of the last file whose chunk lines all came (a file
   * cut short is received again whole). The response holds what follows it (and a new manifest
   * and end).
   */
  @OptionalField()
  @IsString()
  @MaxLength(64 + 1 + 128 * 2)
  @Matches(new RegExp(RESUME_POINT, 'u'), { message: 'after must be <collection>/<_id>' })
  @ApiPropertyOptional({ pattern: RESUME_POINT, example: 'orders/665f1c2a9b1e8a0012345678' })
  after?: string;

  /**
   * Whether the namespace's files (a sub key's: its own) follow the items. Default: `true`
   * without `collections`, `false` with it (a part of the namespace's items leaves files out).
   */
  @OptionalField()
  @IsIn(['true', 'false'])
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  files?: 'true' | 'false';

  /** A sub key's export holds the items whose owner field (this, default `userId`) is its own. */
  @AuthFieldProperty()
  authField?: string;
}

/** The files an export carries, as its manifest counts them. */
export class ManifestFilesDto {
  /** Stored files when the export began (a sub key's: its own). */
  @ApiProperty({ example: 2 })
  count!: number;

  /** Their bytes. */
  @ApiProperty({ example: 52311 })
  bytes!: number;
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

/**
 * A collection's search configuration as a manifest lists it: GET /data/{c}/search without its
 * state, counts and version (an import builds the words of its own).
 */
export class ManifestSearchDto {
  @ApiProperty({
    type: [String],
    minItems: 1,
    uniqueItems: true,
    items: { type: 'string', pattern: CLIENT_PATH_SCHEMA_PATTERN },
    example: ['title', 'body'],
  })
  fields!: string[];

  @ApiProperty({
    type: 'integer',
    minimum: MIN_TOKEN_LENGTH.min,
    maximum: MIN_TOKEN_LENGTH.max,
    example: MIN_TOKEN_LENGTH.default,
  })
  minTokenLength!: number;
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

  /**
   * Its access rules (docs/data.md, "Access rules"), as GET /data/{c}/access without its time:
   * in a root or team key's export, for every collection that has them written.
   */
  @ApiPropertyOptional({ type: AccessRulesDocumentDto })
  access?: AccessRulesDocumentDto;

  /**
   * Its search configuration (docs/data.md, "Search"), in a root or team key's export, for every
   * collection that has one.
   */
  @ApiPropertyOptional({ type: ManifestSearchDto })
  search?: ManifestSearchDto;
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

  /** Present when the export carries files (`files`): their count and bytes. */
  @ApiPropertyOptional({ type: ManifestFilesDto })
  files?: ManifestFilesDto;
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

/** A file as an export lists it: its bytes follow in `file-chunk` lines. */
export class ExportedFileDto {
  @ApiProperty({ example: '665f1c2a9b1e8a0012345678', pattern: '^[0-9a-f]{24}$' })
  id!: string;

  @ApiProperty({ example: 'avatar.png', maxLength: 255 })
  name!: string;

  @ApiProperty({ example: 'image/png' })
  contentType!: string;

  /** Bytes: the chunk lines that follow carry exactly this many. */
  @ApiProperty({ example: 52311 })
  size!: number;

  /** Hex SHA-256 of the bytes. */
  @ApiProperty({ pattern: '^[0-9a-f]{64}$' })
  sha256!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: string;

  /** The uploader's owner value. */
  @ApiProperty({ example: 'auth0|ada' })
  owner!: string;
}

/** A file of an export, after the items, in `_id` (upload) order. */
@ApiSchemaPatch({ additionalProperties: true })
export class ExportFileRecordDto {
  @ApiProperty({ enum: ['file'] })
  type!: 'file';

  @ApiProperty({ type: ExportedFileDto })
  file!: ExportedFileDto;
}

/**
 * A piece of the bytes of the file line before it: `n` counts from 0, each has 196,608 bytes
 * (192 KiB) but the last, and an empty file has none.
 */
@ApiSchemaPatch({ additionalProperties: true })
export class ExportFileChunkRecordDto {
  @ApiProperty({ enum: ['file-chunk'] })
  type!: 'file-chunk';

  /** The file's id. */
  @ApiProperty({ example: '665f1c2a9b1e8a0012345678', pattern: '^[0-9a-f]{24}$' })
  id!: string;

  @ApiProperty({ example: 0, minimum: 0 })
  n!: number;

  /** The bytes, base64 (RFC 4648 §4, padded). */
  @ApiProperty({ format: 'byte' })
  data!: string;
}

/** The last line of an export: a client that did not get it has an incomplete file. */
@ApiSchemaPatch({ additionalProperties: true })
export class ExportEndRecordDto {
  @ApiProperty({ enum: ['end'] })
  type!: 'end';

  /** The lines between the manifest and this one: item, file and file-chunk lines. */
  @ApiProperty({ example: 1250 })
  items!: number;

  /** The `file` lines among them; present when the export carries files. */
  @ApiPropertyOptional({ example: 2 })
  files?: number;

  /**
   * SHA-256 (hex) of those lines, each with its `\n`, in order: items and files alike (each
   * file's own `sha256` covers its bytes).
   */
  @ApiProperty({ pattern: '^[0-9a-f]{64}$' })
  sha256!: string;
}

/** Any line of a namespace export. */
export const EXPORT_LINE = {
  oneOf: [
    { $ref: getSchemaPath(ExportManifestDto) },
    { $ref: getSchemaPath(ExportItemRecordDto) },
    { $ref: getSchemaPath(ExportFileRecordDto) },
    { $ref: getSchemaPath(ExportFileChunkRecordDto) },
    { $ref: getSchemaPath(ExportEndRecordDto) },
  ],
  description:
    'NDJSON: each line is one of these records — a manifest first, then item lines by collection and _id, then each file (by id) with its chunk lines, then the end (docs/data.md, "Export and import")',
};
