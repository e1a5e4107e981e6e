import { Controller, Get, Inject, Param, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth } from '../auth';
import { ApiKeyService } from '../auth/api-key.service';
import { ApiKeyDto } from '../auth/dto/api-key.dto';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { ApiKeysetPage, linkNextPage, parseKeysetPage } from '../common/pagination/keyset-page';
import { APP_CONFIG, type AppConfig } from '../config';
import { CollectionsService } from '../data/collections.service';
import { ProfileDto, ProfileService } from '../profile';
import { MyTeamDto, TeamService } from '../team';
import { SUBJECT_PATTERN, UserDetailDto, UserSummaryDto } from './dto/admin.dto';

/** The operator's view of users. */
@ApiTags('admin')
@Controller('admin/users')
@Auth('operator')
export class AdminUsersController {
  constructor(
    private readonly profiles: ProfileService,
    private readonly keys: ApiKeyService,
    private readonly teams: TeamService,
    private readonly collections: CollectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Every registered user, by subject; `email=` finds one by email. */
  @Get()
  @ApiQuery({
    name: 'email',
    required: false,
    description: 'Only the user with this email (case does not matter)',
    schema: { type: 'string', minLength: 1, maxLength: 254 },
  })
  @ApiKeysetPage('subject', SUBJECT_PATTERN.source, 'the users after that one')
  @ApiOkResponse({ type: [UserSummaryDto], description: 'A page; `Link` names the next one' })
  @ApiBadRequestResponse({ type: ProblemDto })
  async listUsers(
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UserSummaryDto[]> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'subject', valid: (v) => SUBJECT_PATTERN.test(v), rule: '<subject>' },
      params: ['email'],
      order: 'users are listed by subject',
    });
    const { email } = page.params;
    if (email !== undefined && (email.length === 0 || email.length > 254))
      throw new ValidationFailedError([{ field: 'email', message: 'must be 1-254 characters' }]);
    const users = await this.profiles.listUsers({
      limit: page.limit + 1,
      ...(page.after !== undefined ? { afterSubject: page.after } : {}),
      ...(email !== undefined ? { email } : {}),
    });
    const shown = users.slice(0, page.limit);
    const last = shown.at(-1);
    linkNextPage(
      req,
      res,
      raw,
      users.length > page.limit && last ? { subject: last.subject } : undefined,
    );
    return shown.map((u) => ({ ...u, createdAt: u.createdAt.toISOString() }));
  }

  /** A user: its root profile, keys (never secrets), team memberships and quota use. */
  @Get(':subject')
  @ApiOkResponse({ type: UserDetailDto })
  @ApiNotFoundResponse({ type: ProblemDto, description: 'PROFILE_NOT_FOUND: no such user' })
  async getUser(@Param('subject') subject: string): Promise<UserDetailDto> {
    const profile = await this.profiles.getRoot(subject);
    const [keys, teams, collections] = await Promise.all([
      this.keys.list({ subject, boundBranch: null }),
      this.teams.teamsOf(subject),
      this.collections.quotaOf({ kind: 'user', id: subject }, ''),
    ]);
    return {
      profile: ProfileDto.from(profile),
      keys: keys.map((key) => ApiKeyDto.from(key)),
      teams: teams.map((team) => MyTeamDto.from(team)),
      quota: { collections },
    };
  }
}
