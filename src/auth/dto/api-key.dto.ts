import { applyDecorators } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiProperty,
  ApiPropertyOptional,
} from '@nestjs/swagger';
import {
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { IsRfc3339Date, OptionalField } from '../../common/dto';
import { ProblemDto } from '../../common/errors';
import { SCOPES } from '../access-grant';
import type { ApiKeyRecord } from '../api-key.repository';
import type { RotatedKey } from '../api-key.service';
import { BRANCH_PATTERN } from '../branch';

/** The longest rotation grace: a day. */
export const MAX_GRACE_SECONDS = 86_400;

const SCOPES_DESCRIPTION =
  'The scopes the key holds (docs/keys.md, "Authentication" lists what each allows; `x:write` implies `x:read`). Absent or null: every scope, as keys made without it. `[]`: no scope at all, only the routes that need none. An unknown scope is a 400 UNKNOWN_SCOPE.';
const COLLECTIONS_DESCRIPTION =
  'The collections the key reaches, by name or by a prefix with one trailing `*` (`notes*`; `*` alone: every collection), each with `read` or `write` (write implies read; the most any matching entry gives). A collection no entry names is out of reach. Absent or null: every collection. At most API_KEY_MAX_COLLECTIONS entries (50).';
const ALLOWED_IPS_DESCRIPTION =
  'The IPv4/IPv6 addresses or CIDRs requests with the key may come from (the client address as TRUST_PROXY defines it). Absent or null: any address. 1 to API_KEY_MAX_ALLOWED_IPS entries (20).';

function grantFields(): Record<'scopes' | 'collections' | 'allowedIps', object> {
  return {
    scopes: {
      type: [String],
      enum: SCOPES,
      nullable: true,
      description: SCOPES_DESCRIPTION,
      example: ['data:read', 'profile:read'],
    },
    collections: {
      type: 'object',
      additionalProperties: { type: 'string', enum: ['read', 'write'] },
      nullable: true,
      description: COLLECTIONS_DESCRIPTION,
      example: { orders: 'read', 'notes*': 'write' },
    },
    allowedIps: {
      type: [String],
      nullable: true,
      description: ALLOWED_IPS_DESCRIPTION,
      example: ['203.0.113.0/24', '2001:db8::/32'],
    },
  };
}
const GRANT_FIELDS = grantFields();

const PUBLISHABLE_COLLECTIONS_DESCRIPTION =
  'With `"kind": "publishable"`: the list of collection names the key reads (required, 1 to API_KEY_MAX_COLLECTIONS; exact names, no patterns), each through its `public.read` access rule.';
const ALLOWED_ORIGINS_DESCRIPTION =
  "A publishable key's browser origins, exactly as browsers send them (`https://shop.example.com`, `http://localhost:5173`: scheme, host, optional non-default port; no path, no `*`). Required for a publishable key (1 to API_KEY_MAX_ALLOWED_ORIGINS, 20), refused for other kinds. A request with the key and another `Origin` is refused (403) without CORS headers.";

export class CreateApiKeyDto {
  /**
   * `publishable`: a read-only key that is safe in a web page (docs/keys.md, "Publishable keys"): it
   * reads only the listed `collections` through their `public.read` rule, from `allowedOrigins`.
   * Absent: a root key, or with clientId + accountId a sub key.
   */
  @OptionalField()
  @IsIn(['publishable'])
  @ApiPropertyOptional({ enum: ['publishable'] })
  kind?: 'publishable';

  @OptionalField()
  @IsArray()
  @IsString({ each: true })
  @ApiPropertyOptional({
    type: [String],
    description: ALLOWED_ORIGINS_DESCRIPTION,
    example: ['https://shop.example.com'],
  })
  allowedOrigins?: string[];

  /** A label to tell keys apart. */
  @OptionalField()
  @IsString()
  @MaxLength(100)
  @ApiPropertyOptional({ example: 'ci pipeline' })
  name?: string;

  /** With accountId: mint a sub key acting as that existing sub profile. */
  @OptionalField()
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  @ApiPropertyOptional({ example: 'mobile-app' })
  clientId?: string;

  @OptionalField()
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  @ApiPropertyOptional({ example: 'acct-42' })
  accountId?: string;

  /** Branch to bind the key to. For sub keys: the sub profile's branch (default: the request branch). */
  @OptionalField()
  @IsString()
  @Matches(BRANCH_PATTERN, { message: 'branch must match ^[a-z0-9][a-z0-9._-]{0,62}$' })
  @ApiPropertyOptional({ example: 'staging', pattern: BRANCH_PATTERN.source })
  branch?: string;

  /** When the key stops working (RFC 3339, in the future). */
  @OptionalField()
  @IsRfc3339Date()
  @ApiPropertyOptional({ type: String, format: 'date-time', example: '2027-01-01T00:00:00Z' })
  expiresAt?: Date;

  /**
   * Limits of the new key. A key never mints a key with more than it has: a key with limits
   * states limits within its own for every member (403 SCOPE_ESCALATION otherwise).
   */
  @OptionalField({ nullable: true })
  @IsArray()
  @IsString({ each: true })
  @ApiPropertyOptional(GRANT_FIELDS.scopes)
  scopes?: string[] | null;

  // An object of patterns, or (a publishable key) a list of names: each checked where it is read.
  @OptionalField({ nullable: true })
  @ValidateIf((dto: CreateApiKeyDto) => dto.kind !== 'publishable')
  @IsObject()
  @ApiPropertyOptional({
    oneOf: [
      { ...GRANT_FIELDS.collections, description: undefined },
      {
        type: 'array',
        items: { type: 'string' },
        description: PUBLISHABLE_COLLECTIONS_DESCRIPTION,
      },
    ],
    nullable: true,
    description: `${COLLECTIONS_DESCRIPTION} ${PUBLISHABLE_COLLECTIONS_DESCRIPTION}`,
    example: { orders: 'read', 'notes*': 'write' },
  })
  collections?: Record<string, unknown> | string[] | null;

  @OptionalField({ nullable: true })
  @IsArray()
  @IsString({ each: true })
  @ApiPropertyOptional(GRANT_FIELDS.allowedIps)
  allowedIps?: string[] | null;
}

/** Body of POST /api-keys/{id}/rotate. */
export class RotateApiKeyDto {
  /**
   * How long the old secret keeps working (s, 0-86400; default 0: it stops at once, as for a
   * leaked key). Never beyond the key's own expiry.
   */
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(MAX_GRACE_SECONDS)
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_GRACE_SECONDS,
    default: 0,
    example: 3600,
  })
  graceSeconds?: number;
}

/** Key metadata; the secret is never listed. */
export class ApiKeyDto {
  @ApiProperty({ example: '665f1c2a9b1e8a0012345679' })
  id!: string;

  @ApiProperty({ example: 'ci pipeline' })
  name!: string;

  @ApiProperty({ description: 'First characters of the secret', example: 'pds_Xy3kQ9ab' })
  prefix!: string;

  @ApiProperty({ enum: ['root', 'sub', 'team', 'publishable'] })
  kind!: string;

  @ApiProperty({ example: '' })
  clientId!: string;

  @ApiProperty({ example: '' })
  accountId!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Bound branch; null = any (X-Branch)',
    example: null,
  })
  branch!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt!: string | null;

  @ApiProperty({
    ...GRANT_FIELDS.scopes,
    description: 'The scopes the key holds; null: every scope.',
  })
  scopes!: string[] | null;

  @ApiProperty({
    ...GRANT_FIELDS.collections,
    description: 'The collections the key reaches; null: every collection.',
  })
  collections!: Record<string, 'read' | 'write'> | null;

  @ApiProperty({
    ...GRANT_FIELDS.allowedIps,
    description: 'The addresses the key may be used from; null: any.',
  })
  allowedIps!: string[] | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Last use, to within API_KEY_LAST_USED_INTERVAL_MS (a minute by default); null: not used yet.',
    example: null,
  })
  lastUsedAt!: string | null;

  @ApiProperty({
    type: [String],
    nullable: true,
    description: "A publishable key's browser origins; null for the other kinds.",
    example: null,
  })
  allowedOrigins!: string[] | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  static from(key: ApiKeyRecord): ApiKeyDto {
    return {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      kind: key.kind,
      clientId: key.clientId,
      accountId: key.accountId,
      branch: key.branch,
      expiresAt: key.expiresAt ? key.expiresAt.toISOString() : null,
      ...grantView(key),
      lastUsedAt: key.lastUsedAt ? key.lastUsedAt.toISOString() : null,
      allowedOrigins: key.allowedOrigins && [...key.allowedOrigins],
      createdAt: key.createdAt.toISOString(),
    };
  }
}

export class IssuedApiKeyDto {
  @ApiProperty({ type: ApiKeyDto })
  key!: ApiKeyDto;

  /** The secret. Shown once: store it now, it cannot be read again. */
  @ApiProperty({ example: 'pds_Xy3kQ9abVb0yq3c1nq7m3Yq0kq3M2oX1m8eQ0lq5wTo' })
  apiKey!: string;
}

/** The key's new secret, and when the secret it replaces stops working. */
export class RotatedApiKeyDto extends IssuedApiKeyDto {
  @ApiProperty({
    type: String,
    format: 'date-time',
    description: 'When the old secret stops working (401 after it)',
  })
  previousExpiresAt!: string;

  static of(rotated: RotatedKey): RotatedApiKeyDto {
    return {
      key: ApiKeyDto.from(rotated.key),
      apiKey: rotated.apiKey,
      previousExpiresAt: rotated.previousExpiresAt.toISOString(),
    };
  }
}

/** A key's limits as listed: null members are no limit. */
export function grantView(
  key: Pick<ApiKeyRecord, 'grant'>,
): Pick<ApiKeyDto, 'scopes' | 'collections' | 'allowedIps'> {
  const { scopes, collections, allowedIps } = key.grant;
  return {
    scopes: scopes && [...scopes],
    collections: collections && { ...collections },
    allowedIps: allowedIps && [...allowedIps],
  };
}

/** The 400 and 403 of minting a key with limits (POST /api-keys, POST /teams/{id}/api-keys). */
export const ApiKeyLimitProblems = (): MethodDecorator =>
  applyDecorators(
    ApiBadRequestResponse({
      type: ProblemDto,
      description: 'VALIDATION_FAILED; UNKNOWN_SCOPE: a scope outside the vocabulary',
    }),
    ApiForbiddenResponse({
      type: ProblemDto,
      description:
        'SCOPE_ESCALATION: the new key would have more than the calling key, or outlive it',
    }),
  );
