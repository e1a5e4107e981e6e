import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  Allow,
  IsEmail,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateBy,
  type ValidationArguments,
} from 'class-validator';
import { IsRfc3339Date, OptionalField } from '../../common/dto';
import { sharedSchemaRef } from '../../common/http/openapi-schemas';
import { JsonArrayBody } from '../../common/http/validation';
import { ApiKeyDto } from '../../auth/dto/api-key.dto';
import { LinkedIdentityDto } from '../../identity';
import { ProfileDto } from '../../profile';
import { MyTeamDto } from '../../team';
import { PlacementRequestDto } from './placement.dto';

export const SUBJECT_PATTERN = /^[A-Za-z0-9._:@|+-]{1,128}$/;

export class CreateUserDto extends PlacementRequestDto {
  @IsEmail()
  @MaxLength(254)
  @ApiProperty({ example: 'ada@example.com' })
  email!: string;

  /** The user's subject (e.g. from your identity provider); generated (UUID) when absent. */
  @OptionalField()
  @IsString()
  @Matches(SUBJECT_PATTERN, { message: 'subject must be 1-128 of A-Z a-z 0-9 . _ : @ | + -' })
  @ApiPropertyOptional({
    example: 'auth0|5f7c8ec7c33c6c004bbafe82',
    pattern: SUBJECT_PATTERN.source,
  })
  subject?: string;
}

export class CreatedUserDto {
  @ApiProperty({ type: ProfileDto })
  profile!: ProfileDto;

  /** The user's first root key. Shown once. */
  @ApiProperty({ example: 'pds_Xy3kQ9abVb0yq3c1nq7m3Yq0kq3M2oX1m8eQ0lq5wTo' })
  apiKey!: string;
}

export class CreateTeamDto extends PlacementRequestDto {
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @ApiProperty({ example: 'Platform team' })
  name!: string;
}

export class TeamDto {
  @ApiProperty({ example: '3f1b7a0e-9c55-4a43-a7e1-5f8f3b9d2c10' })
  id!: string;

  @ApiProperty({ example: 'Platform team' })
  name!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class CreatedTeamDto {
  @ApiProperty({ type: TeamDto })
  team!: TeamDto;

  /** The team's key. Shown once. */
  @ApiProperty({ example: 'pds_Q2xk9ab0Vb0yq3c1nq7m3Yq0kq3M2oX1m8eQ0lq5wTo' })
  apiKey!: string;
}

export const MAX_PLANS = 50;

/** A date that must not lie before the date in `property` of the same object. */
function NotBefore(property: string): PropertyDecorator {
  return ValidateBy({
    name: 'notBefore',
    validator: {
      validate: (value: unknown, args: ValidationArguments) => {
        const other = (args.object as Record<string, unknown>)[property];
        return !(value instanceof Date && other instanceof Date && value < other);
      },
      defaultMessage: (args?: ValidationArguments) =>
        `${args?.property ?? 'value'} must not be before ${property}`,
    },
  });
}

export class PlanInputDto {
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @ApiProperty({ example: 'pro' })
  planName!: string;

  @IsRfc3339Date()
  @ApiProperty({ type: String, format: 'date-time', example: '2026-01-01T00:00:00Z' })
  since!: Date;

  @IsRfc3339Date()
  @NotBefore('since')
  @ApiProperty({ type: String, format: 'date-time', example: '2027-01-01T00:00:00Z' })
  until!: Date;

  // Follows the rules of profile settings, which ProfileService.setPlans checks; the profile
  // module registers their schema (profile-json.ts).
  @Allow()
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: sharedSchemaRef('ProfileJsonValue'),
    example: { seats: 5 },
  })
  metadata?: unknown;
}

/** The body of PUT /admin/users/{subject}/plans: a JSON array of plans. */
@JsonArrayBody(PlanInputDto, { maxItems: MAX_PLANS, tooMany: `at most ${MAX_PLANS} plans` })
export class PlanListDto extends Array<PlanInputDto> {}

/** Identities one PUT /admin/users/{subject}/identities may give a user. */
export const MAX_IDENTITIES = 32;

/** An identity of an identity provider: the issuer (one of OIDC_ISSUERS) and its subject claim. */
export class IdentityInputDto {
  /** The exact `iss` of an issuer configured in OIDC_ISSUERS. */
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  @ApiProperty({ example: 'https://idp.example.com/realms/main' })
  issuer!: string;

  /** The identity's `sub` at that issuer. */
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  @ApiProperty({ example: '248289761001' })
  subject!: string;
}

/** The body of PUT /admin/users/{subject}/identities: every identity the user is to have. */
@JsonArrayBody(IdentityInputDto, {
  maxItems: MAX_IDENTITIES,
  tooMany: `at most ${MAX_IDENTITIES} identities`,
})
export class IdentityListDto extends Array<IdentityInputDto> {}

export class UserSummaryDto {
  @ApiProperty({ example: 'auth0|5f7c8ec7c33c6c004bbafe82' })
  subject!: string;

  @ApiProperty({ example: 'ada@example.com' })
  email!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class CollectionQuotaDto {
  @ApiProperty({ minimum: 0, example: 3 })
  used!: number;

  /** The user's limit (its plan's, else MAX_COLLECTIONS); null: none. */
  @ApiProperty({ type: Number, minimum: 0, nullable: true, example: 100 })
  limit!: number | null;
}

export class UserQuotaDto {
  /** Collections of the user's namespace in the standard branch (''). */
  @ApiProperty({ type: CollectionQuotaDto })
  collections!: CollectionQuotaDto;
}

export class UserDetailDto {
  @ApiProperty({ type: ProfileDto })
  profile!: ProfileDto;

  /** Every key of the user (root and sub, every branch); never a secret. */
  @ApiProperty({ type: [ApiKeyDto] })
  keys!: ApiKeyDto[];

  @ApiProperty({ type: [MyTeamDto] })
  teams!: MyTeamDto[];

  @ApiProperty({ type: UserQuotaDto })
  quota!: UserQuotaDto;
  /** The identities of identity providers linked to the user (docs/keys.md, "Authentication"). */
  @ApiProperty({ type: [LinkedIdentityDto] })
  identities!: LinkedIdentityDto[];
}
