import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Put,
  Query,
  Req,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Auth, TEAM_ID_PATTERN, NeedsNoScope } from '../auth';
import { ProblemDto } from '../common/errors';
import { ApiKeysetList, nextPageLink, parseKeysetPage } from '../common/pagination/keyset-page';
import { Reply } from '../common/http/reply';
import { APP_CONFIG, type AppConfig } from '../config';
import { ErasureService } from '../lifecycle';
import { acceptedErasure, ERASURE_ACCEPTED, ErasureDto } from '../profile';
import { PutTeamMemberDto, TeamDetailDto, TeamMemberDto, TeamService } from '../team';
import { AdminService } from './admin.service';
import { CreatedTeamDto, CreateTeamDto, PlanInputDto, PlanListDto, TeamDto } from './dto/admin.dto';

/** The operator's teams: registration, reads, members and erasure. */
@ApiTags('admin')
@Controller('admin/teams')
@NeedsNoScope()
@Auth('operator')
export class AdminTeamsController {
  constructor(
    private readonly admin: AdminService,
    private readonly teams: TeamService,
    private readonly erasures: ErasureService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Every team, by id; `Link: <…>; rel="next"` while more follow. */
  @Get()
  @ApiKeysetList(TeamDto, 'id', TEAM_ID_PATTERN.source, 'the teams after that one')
  async listTeams(
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
  ): Promise<Reply<TeamDto[]>> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'id', valid: (v) => TEAM_ID_PATTERN.test(v), rule: '<team id>' },
      order: 'teams are listed by id',
    });
    const { teams, more } = await this.teams.list({
      limit: page.limit,
      ...(page.after !== undefined ? { afterId: page.after } : {}),
    });
    const last = teams.at(-1);
    return Reply.page(
      teams.map((team) => ({
        id: team.id,
        name: team.name,
        createdAt: team.createdAt.toISOString(),
      })),
      nextPageLink(req, raw, more && last ? { id: last.id } : undefined),
    );
  }

  /** Registers a team, places its data on a cluster (of `region`, if given) and returns its key. */
  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED; UNKNOWN_REGION; NO_OPEN_CLUSTER: every cluster of the region is closed',
  })
  async createTeam(@Body() body: CreateTeamDto): Promise<CreatedTeamDto> {
    const { team, apiKey } = await this.admin.createTeam(body.name, body.region);
    return {
      team: { id: team.id, name: team.name, createdAt: team.createdAt.toISOString() },
      apiKey,
    };
  }

  /** A team with its members. */
  @Get(':id')
  @ApiOkResponse({ type: TeamDetailDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'TEAM_NOT_FOUND' })
  async getTeam(@Param('id') id: string): Promise<TeamDetailDto> {
    return TeamDetailDto.from(await this.teams.get(id));
  }

  /** Erases a team like an account: its keys, memberships, projects and collections, then the team. */
  @Delete(':id')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse(ERASURE_ACCEPTED)
  @ApiNotFoundResponse({ type: ProblemDto, description: 'TEAM_NOT_FOUND: no such team' })
  async eraseTeam(@Param('id') id: string): Promise<Reply<ErasureDto>> {
    return acceptedErasure(await this.erasures.start({ kind: 'team', id }));
  }

  /**
   * Replaces the plans the team holds, with the body and rules of PUT
   * /admin/users/{subject}/plans (docs/plans.md). The team's key and its members acting for it
   * get the active plan's limits: on this instance at once, on the others within PLAN_CACHE_MS.
   */
  @Put(':id/plans')
  @ApiBody({ type: [PlanInputDto] })
  @ApiOkResponse({ type: TeamDetailDto })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'TEAM_NOT_FOUND' })
  async setTeamPlans(@Param('id') id: string, @Body() plans: PlanListDto): Promise<TeamDetailDto> {
    return TeamDetailDto.from(await this.admin.setTeamPlans(id, plans));
  }

  /** Makes a user a member of the team, or changes its role. */
  @Put(':id/members/:subject')
  @ApiOkResponse({ type: TeamMemberDto })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'TEAM_NOT_FOUND; PROFILE_NOT_FOUND: no such user',
  })
  async putTeamMember(
    @Param('id') id: string,
    @Param('subject') subject: string,
    @Body() body: PutTeamMemberDto,
  ): Promise<TeamMemberDto> {
    return TeamMemberDto.from(await this.teams.putMember(id, subject, body.role));
  }

  /** Removes a member: its root keys stop acting for the team with the next request. */
  @Delete(':id/members/:subject')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'TEAM_NOT_FOUND; MEMBER_NOT_FOUND' })
  async deleteTeamMember(
    @Param('id') id: string,
    @Param('subject') subject: string,
  ): Promise<void> {
    await this.teams.removeMember(id, subject);
  }
}
