import { ApiProperty } from '@nestjs/swagger';
import type { Plan, Profile, SettingsValue } from '../profile.types';

export class PlanDto {
  @ApiProperty({ example: 'pro' })
  planName!: string;

  @ApiProperty({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' })
  since!: string;

  @ApiProperty({ format: 'date-time', example: '2027-01-01T00:00:00.000Z' })
  until!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { seats: 5 } })
  metadata!: Record<string, SettingsValue>;

  static from(plan: Plan): PlanDto {
    return {
      planName: plan.planName,
      since: plan.since.toISOString(),
      until: plan.until.toISOString(),
      metadata: plan.metadata,
    };
  }
}

/** A root or sub profile. Every field is always present (empty string, object or array when unset). */
export class ProfileDto {
  @ApiProperty({ example: '665f1c2a9b1e8a0012345678' })
  id!: string;

  @ApiProperty({ example: 'auth0|5f7c8ec7c33c6c004bbafe82' })
  subject!: string;

  @ApiProperty({ description: "Sub profile's account id; '' for a root profile", example: '' })
  accountId!: string;

  @ApiProperty({ description: "OAuth client of a sub profile; '' for a root profile", example: '' })
  clientId!: string;

  @ApiProperty({ description: "Context branch; '' for the standard branch", example: '' })
  branch!: string;

  @ApiProperty({ type: [PlanDto] })
  plans!: PlanDto[];

  @ApiProperty({ example: 'https://example.com/avatar.png' })
  avatar!: string;

  @ApiProperty({ example: 'ada@example.com' })
  email!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { theme: 'dark', notifications: { email: true } },
  })
  settings!: Record<string, SettingsValue>;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { crmId: '42' },
  })
  metadata!: Record<string, string>;

  @ApiProperty({ type: [String], example: ['admin:subject'] })
  groups!: string[];

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;

  static from(profile: Profile): ProfileDto {
    return {
      id: profile.id,
      subject: profile.subject,
      accountId: profile.accountId,
      clientId: profile.clientId,
      branch: profile.branch,
      plans: profile.plans.map((p) => PlanDto.from(p)),
      avatar: profile.avatar,
      email: profile.email,
      settings: profile.settings,
      metadata: profile.metadata,
      groups: profile.groups,
      createdAt: profile.createdAt.toISOString(),
      updatedAt: profile.updatedAt.toISOString(),
    };
  }
}
