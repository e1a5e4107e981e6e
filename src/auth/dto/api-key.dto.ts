import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { IsRfc3339Date, OptionalField } from '../../common/dto';
import type { ApiKeyRecord } from '../api-key.repository';
import { BRANCH_PATTERN } from '../branch';

export class CreateApiKeyDto {
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
}

/** Key metadata; the secret is never listed. */
export class ApiKeyDto {
  @ApiProperty({ example: '665f1c2a9b1e8a0012345679' })
  id!: string;

  @ApiProperty({ example: 'ci pipeline' })
  name!: string;

  @ApiProperty({ description: 'First characters of the secret', example: 'pds_Xy3kQ9ab' })
  prefix!: string;

  @ApiProperty({ enum: ['root', 'sub', 'team'] })
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
