import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { FIELD_PATH_SCHEMA_PATTERN, MAX_FIELD_NAME_LENGTH } from '../../../query/json-guard';
import type { ExpiryRule } from '../../collection-rules';

/** A field path (the guard's rules) that is not `_id` nor inside a field the server manages. */
export const EXPIRY_FIELD_SCHEMA_PATTERN = `^(?!_id(?:\\.|$))(?!_(?:createdAt|updatedAt)\\.)${FIELD_PATH_SCHEMA_PATTERN.slice(1)}`;

/** The most EXPIRY_MAX_SECONDS may be (100 years); the configured maximum is checked too. */
export const AFTER_SECONDS_CEILING = 3_153_600_000;

/** `PUT /data/{c}/expiry`: when the collection's items expire. */
export class PutExpiryDto {
  /**
   * `_createdAt`, `_updatedAt`, or the path of a field holding an RFC 3339 time in UTC
   * (`2026-11-26T09:00:00Z`; docs/data.md, "Expiry"). Not `_id` nor a path inside a managed field.
   */
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_FIELD_NAME_LENGTH)
  @ApiProperty({ example: 'expiresAt', pattern: EXPIRY_FIELD_SCHEMA_PATTERN, maxLength: 256 })
  field!: string;

  /** An item expires this many seconds after its field's time; at most EXPIRY_MAX_SECONDS. */
  @IsInt()
  @Min(1)
  @Max(AFTER_SECONDS_CEILING)
  @ApiProperty({ example: 3600, minimum: 1, maximum: AFTER_SECONDS_CEILING, type: 'integer' })
  afterSeconds!: number;
}

/** A collection's expiry rule. */
export class ExpiryDto {
  @ApiProperty({ example: '_createdAt' })
  field!: string;

  @ApiProperty({ example: 86400, type: 'integer' })
  afterSeconds!: number;

  /** When the rule was set (RFC 3339). */
  @ApiProperty({ example: '2026-11-26T09:00:00.000Z', format: 'date-time' })
  changedAt!: string;
}

export function toExpiryDto(rule: ExpiryRule): ExpiryDto {
  return {
    field: rule.field,
    afterSeconds: rule.afterSeconds,
    changedAt: new Date(rule.changedAt).toISOString(),
  };
}
