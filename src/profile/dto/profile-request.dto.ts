import { ApiHideProperty, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsEmail,
  IsIn,
  IsString,
  Matches,
  MaxLength,
  ValidateBy,
} from 'class-validator';
import { OptionalField } from '../../common/dto';
import { OWNER_FIELD_SCHEMA_PATTERN } from '../../data/query';
import { JsonObjectBody } from '../../common/http/validation';
import {
  MAX_GROUPS,
  PROFILE_NAME_PATTERN,
  PROFILE_NAME_RULE,
  PROFILE_TARGET_PATTERN,
} from '../profile.constants';
import { PROFILE_JSON_PATCH_VALUE, PROFILE_JSON_VALUE, ProfileJson } from '../profile-json';
import type { SettingsValue } from '../profile.types';

/**
 * PROFILE_NAME_PATTERN and PROFILE_TARGET_PATTERN for the document: `\p{Cc}` needs the `u` flag,
 * which many schema validators do not use, so the control range is spelled out (U+0000-U+001F,
 * U+007F-U+009F).
 */
export const NAME_SCHEMA_PATTERN = '^[^\\s\\x00-\\x1F\\x7F-\\x9F]{1,128}$';
const TARGET_SCHEMA_PATTERN = '^[^\\s\\x00-\\x1F\\x7F-\\x9F]{0,128}$';

/**
 * Avatars: '' or an http(s) URL with a DNS name or IPv4 host, an optional port, then printable
 * ASCII. One pattern is both the rule and its documentation, so that what the document calls a
 * valid avatar is exactly what is accepted.
 */
const AVATAR_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const AVATAR_SCHEMA_PATTERN = `^(?:|https?://${AVATAR_LABEL}(?:\\.${AVATAR_LABEL})*(?::[0-9]{1,5})?(?:[/?#][!-~]*)?)$`;
const AVATAR_PATTERN = new RegExp(AVATAR_SCHEMA_PATTERN);

/** A body member that is never accepted, with a message that says why. */
function Refused(message: string): PropertyDecorator {
  return ValidateBy({
    name: 'refused',
    validator: { validate: (value) => value === undefined, defaultMessage: () => message },
  });
}

/** Optional target of an operation; without both, the caller's own profile. */
export class ProfileTargetQueryDto {
  /** OAuth client of the target sub profile (with accountId). '' with accountId='' = the root profile. */
  @OptionalField()
  @IsString()
  @Matches(PROFILE_TARGET_PATTERN, { message: `clientId must be ${PROFILE_NAME_RULE}, or ''` })
  @ApiPropertyOptional({ example: 'mobile-app', pattern: TARGET_SCHEMA_PATTERN })
  clientId?: string;

  /** accountId of the target sub profile (with clientId). '' with clientId='' = the root profile. */
  @OptionalField()
  @IsString()
  @Matches(PROFILE_TARGET_PATTERN, { message: `accountId must be ${PROFILE_NAME_RULE}, or ''` })
  @ApiPropertyOptional({ example: 'acct-42', pattern: TARGET_SCHEMA_PATTERN })
  accountId?: string;
}

export class SubProfileParamsDto {
  /** accountId of the sub profile. */
  @IsString()
  @Matches(PROFILE_NAME_PATTERN, { message: `accountId must be ${PROFILE_NAME_RULE}` })
  @ApiProperty({ example: 'acct-42', pattern: NAME_SCHEMA_PATTERN })
  accountId!: string;
}

export class SubProfileQueryDto {
  /** OAuth client of the sub profile; needed when the accountId exists under several clients. */
  @OptionalField()
  @IsString()
  @Matches(PROFILE_NAME_PATTERN, { message: `clientId must be ${PROFILE_NAME_RULE}` })
  @ApiPropertyOptional({ example: 'mobile-app', pattern: NAME_SCHEMA_PATTERN })
  clientId?: string;
}

export class SubProfileDeletionQueryDto extends SubProfileQueryDto {
  /**
   * `true`: also delete the items the sub profile owned — those whose owner field holds its
   * accountId — in every collection of the namespace in the request branch. Default: they stay.
   */
  @OptionalField()
  @IsIn(['true', 'false'], { message: 'purgeData must be true or false' })
  @ApiPropertyOptional({ enum: ['true', 'false'], default: 'false' })
  purgeData?: 'true' | 'false';

  /** With purgeData: the owner field of the items (default `userId`), as on the data routes. */
  @OptionalField()
  @IsString()
  @MaxLength(256)
  @ApiPropertyOptional({
    example: 'userId',
    default: 'userId',
    pattern: OWNER_FIELD_SCHEMA_PATTERN,
    maxLength: 256,
  })
  authField?: string;
}

@JsonObjectBody()
export class CreateSubProfileDto {
  /** The account's id on the OAuth client's platform. */
  @IsString()
  @Matches(PROFILE_NAME_PATTERN, { message: `accountId must be ${PROFILE_NAME_RULE}` })
  @ApiProperty({ example: 'acct-42', pattern: NAME_SCHEMA_PATTERN })
  accountId!: string;

  /** The OAuth client the account registered or logged in through. */
  @IsString()
  @Matches(PROFILE_NAME_PATTERN, { message: `clientId must be ${PROFILE_NAME_RULE}` })
  @ApiProperty({ example: 'mobile-app', pattern: NAME_SCHEMA_PATTERN })
  clientId!: string;

  /** E-mail of the account (stored lower-case); cannot be changed later. */
  @IsEmail()
  @MaxLength(254)
  @ApiProperty({ example: 'grace@example.com' })
  email!: string;

  /** Initial groups (duplicates are merged). */
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(MAX_GROUPS)
  @IsString({ each: true })
  @Matches(PROFILE_NAME_PATTERN, { each: true, message: `each group must be ${PROFILE_NAME_RULE}` })
  @ApiPropertyOptional({
    type: [String],
    example: ['beta-testers'],
    maxItems: MAX_GROUPS,
    items: { type: 'string', pattern: NAME_SCHEMA_PATTERN },
  })
  groups?: string[];

  /** Stored as settings.userMetadata. Values: object, string, integer or boolean. */
  @ProfileJson({ values: 'json', patch: false, depthOffset: 1 })
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: PROFILE_JSON_VALUE,
    example: { locale: 'en-GB', onboarding: { step: 2 } },
  })
  userMetadata?: Record<string, SettingsValue>;
}

@JsonObjectBody()
export class UpdateProfileDto {
  /** An http(s) URL, or '' (or null) to clear it. */
  @OptionalField({ nullable: true })
  @IsString()
  @MaxLength(2048)
  @Matches(AVATAR_PATTERN, { message: "avatar must be an http(s) URL or ''" })
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: AVATAR_SCHEMA_PATTERN,
    example: 'https://example.com/me.png',
  })
  avatar?: string | null;

  /**
   * JSON merge patch (RFC 7386) of the settings: keys are merged, nested objects recursively; a key
   * set to null is removed; `settings: null` clears all settings. Values: object, string, integer,
   * boolean.
   */
  @ProfileJson({ values: 'json', patch: true })
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: PROFILE_JSON_PATCH_VALUE,
    nullable: true,
    example: { theme: 'dark', notifications: { email: false }, legacy: null },
  })
  settings?: Record<string, unknown> | null;

  /**
   * JSON merge patch of the metadata (string values; null removes a key, `metadata: null` clears
   * it). Root keys only: a sub key sending metadata gets 403.
   */
  @ProfileJson({ values: 'string', patch: true })
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true },
    nullable: true,
    example: { crmId: '42' },
  })
  metadata?: Record<string, unknown> | null;

  @ApiHideProperty()
  @Refused('email cannot be changed')
  email?: unknown;

  @ApiHideProperty()
  @Refused('groups change through PUT and DELETE /profile/groups')
  groups?: unknown;

  @ApiHideProperty()
  @Refused('plans change only through the operator API')
  plans?: unknown;
}

export class ProfileGroupDto {
  /** Group name: 1-128 characters, no whitespace or control characters. */
  @IsString()
  @Matches(PROFILE_NAME_PATTERN, { message: `group must be ${PROFILE_NAME_RULE}` })
  @ApiProperty({ example: 'admin:subject', pattern: NAME_SCHEMA_PATTERN })
  group!: string;
}
