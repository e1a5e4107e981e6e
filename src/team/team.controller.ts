import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type Principal, NeedsScope } from '../auth';
import {
  ApiKeyDto,
  ApiKeyLimitProblems,
  IssuedApiKeyDto,
  RotateApiKeyDto,
  RotatedApiKeyDto,
} from '../auth/dto/api-key.dto';
import { ProblemDto } from '../common/errors';
import { CreateTeamApiKeyDto, MyTeamDto } from './dto/team.dto';
import { TeamKeysService } from './team-keys.service';
import { TeamService } from './team.service';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

const NOT_A_TEAM = 'TEAM_NOT_FOUND: no such team, or you are not a member of it';

/**
 * A member's view of its teams, and team key management by `admin` members. A root key bound to
 * a branch manages no team keys: an unbound team key would reach beyond its branch.
 */
@ApiTags('teams')
@Controller('teams')
@Auth('root')
export class TeamController {
  constructor(
    private readonly teams: TeamService,
    private readonly keys: TeamKeysService,
  ) {}

  /** The teams you belong to, with your role in each (act for one with `X-Team: <teamId>`). */
  @Get()
  @NeedsScope('profile:read')
  @ApiOkResponse({ type: [MyTeamDto] })
  async listMyTeams(@CurrentPrincipal() principal: RootPrincipal): Promise<MyTeamDto[]> {
    return (await this.teams.teamsOf(principal.subject)).map((team) => MyTeamDto.from(team));
  }

  /** The team's keys (team and publishable keys), never their secrets (admin members). */
  @Get(':id/api-keys')
  @NeedsScope('keys:manage')
  @ApiOkResponse({ type: [ApiKeyDto] })
  @ApiNotFoundResponse({ type: ProblemDto, description: NOT_A_TEAM })
  async listTeamApiKeys(
    @CurrentPrincipal() principal: RootPrincipal,
    @Param('id') id: string,
  ): Promise<ApiKeyDto[]> {
    return (await this.keys.list(principal, id)).map((key) => ApiKeyDto.from(key));
  }

  /**
   * Mints a key of the team (admin members); the secret is shown once. `scopes`, `collections`
   * and `allowedIps` limit it as for POST /api-keys; never beyond the admin's own key (403
   * SCOPE_ESCALATION). With `"kind": "publishable"`, `collections` (a list of names) and
   * `allowedOrigins`: a publishable key of the team, which reads only those collections of the
   * team through their `public.read` rule, from those origins (docs/keys.md, "Publishable keys"); this
   * is how a team mints one (POST /api-keys mints a user's).
   */
  @Post(':id/api-keys')
  @NeedsScope('keys:manage')
  @HttpCode(HttpStatus.OK)
  @ApiBody({ type: CreateTeamApiKeyDto, required: false })
  @ApiOkResponse({ type: IssuedApiKeyDto })
  @ApiKeyLimitProblems()
  @ApiNotFoundResponse({ type: ProblemDto, description: NOT_A_TEAM })
  async createTeamApiKey(
    @CurrentPrincipal() principal: RootPrincipal,
    @Param('id') id: string,
    @Body() body: CreateTeamApiKeyDto,
  ): Promise<IssuedApiKeyDto> {
    const issued = await this.keys.create(principal, id, body);
    return { key: ApiKeyDto.from(issued.key), apiKey: issued.apiKey };
  }

  /**
   * A new secret for a key of the team, with the same rights, name, branch and expiry (admin
   * members); the old secret works for `graceSeconds` more (default 0), as POST
   * /api-keys/{id}/rotate.
   */
  @Post(':id/api-keys/:keyId/rotate')
  @NeedsScope('keys:manage')
  @HttpCode(HttpStatus.OK)
  @ApiBody({ type: RotateApiKeyDto, required: false })
  @ApiOkResponse({ type: RotatedApiKeyDto })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description: 'SCOPE_ESCALATION: the key has rights the calling key lacks, or outlives it',
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: `${NOT_A_TEAM}; API_KEY_NOT_FOUND: no such key of the team`,
  })
  async rotateTeamApiKey(
    @CurrentPrincipal() principal: RootPrincipal,
    @Param('id') id: string,
    @Param('keyId') keyId: string,
    @Body() body: RotateApiKeyDto,
  ): Promise<RotatedApiKeyDto> {
    return RotatedApiKeyDto.of(await this.keys.rotate(principal, id, keyId, body));
  }

  /** Revokes a key of the team at once (admin members). */
  @Delete(':id/api-keys/:keyId')
  @NeedsScope('keys:manage')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: `${NOT_A_TEAM}; API_KEY_NOT_FOUND: no such key of the team`,
  })
  async deleteTeamApiKey(
    @CurrentPrincipal() principal: RootPrincipal,
    @Param('id') id: string,
    @Param('keyId') keyId: string,
  ): Promise<void> {
    await this.keys.revoke(principal, id, keyId);
  }
}
