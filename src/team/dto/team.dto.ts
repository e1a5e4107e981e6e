import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { CreateApiKeyDto } from '../../auth/dto/api-key.dto';
import { IsIn } from 'class-validator';
import { OptionalField } from '../../common/dto';
import { JsonObjectBody } from '../../common/http/validation';
import { PlanDto } from '../../profile';
import type { TeamMembership } from '../team-membership.repository';
import { TEAM_ROLES, type TeamRole } from '../team-membership.schema';
import type { MyTeam, TeamWithMembers } from '../team.service';

export class TeamMemberDto {
  @ApiProperty({ example: 'auth0|5f7c8ec7c33c6c004bbafe82' })
  subject!: string;

  @ApiProperty({ enum: TEAM_ROLES })
  role!: TeamRole;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  static from(member: TeamMembership): TeamMemberDto {
    return {
      subject: member.subject,
      role: member.role,
      createdAt: member.createdAt.toISOString(),
    };
  }
}

export class TeamDetailDto {
  @ApiProperty({ example: '3f1b7a0e-9c55-4a43-a7e1-5f8f3b9d2c10' })
  id!: string;

  @ApiProperty({ example: 'Platform team' })
  name!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  /** The plans the team holds (PUT /admin/teams/{id}/plans; docs/plans.md). */
  @ApiProperty({ type: [PlanDto] })
  plans!: PlanDto[];

  @ApiProperty({ type: [TeamMemberDto] })
  members!: TeamMemberDto[];

  static from(team: TeamWithMembers): TeamDetailDto {
    return {
      id: team.id,
      name: team.name,
      createdAt: team.createdAt.toISOString(),
      plans: team.plans.map((plan) => PlanDto.from(plan)),
      members: team.members.map((m) => TeamMemberDto.from(m)),
    };
  }
}

export class MyTeamDto {
  @ApiProperty({ example: '3f1b7a0e-9c55-4a43-a7e1-5f8f3b9d2c10' })
  teamId!: string;

  @ApiProperty({ example: 'Platform team' })
  name!: string;

  @ApiProperty({ enum: TEAM_ROLES })
  role!: TeamRole;

  static from(team: MyTeam): MyTeamDto {
    return { teamId: team.teamId, name: team.name, role: team.role };
  }
}

@JsonObjectBody()
export class PutTeamMemberDto {
  /** `admin` may also manage the team's keys; `member` acts for the team only. */
  @IsIn(TEAM_ROLES)
  @ApiProperty({ enum: TEAM_ROLES, example: 'member' })
  role!: TeamRole;
}

/**
 * Body of POST /teams/{id}/api-keys: a team key, optionally named, bound, expiring and limited;
 * or with `"kind": "publishable"`, `collections` (names) and `allowedOrigins` a publishable key
 * reading the team's collections.
 */
export class CreateTeamApiKeyDto extends PickType(CreateApiKeyDto, [
  'kind',
  'allowedOrigins',
  'name',
  'branch',
  'expiresAt',
  'scopes',
  'collections',
  'allowedIps',
] as const) {
  @OptionalField()
  @IsIn(['publishable'])
  @ApiPropertyOptional({
    enum: ['publishable'],
    description:
      '`publishable`: a publishable key of the team, safe in a web page (docs/keys.md, "Publishable keys"): it reads only the listed `collections` of the team through their `public.read` rule, from `allowedOrigins`. Absent: a team key.',
  })
  override kind?: 'publishable';
}
