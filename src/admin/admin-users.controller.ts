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
  Res,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth, NeedsNoScope } from '../auth';
import { ApiKeyDto } from '../auth/dto/api-key.dto';
import { ProblemDto } from '../common/errors';
import { sendLines } from '../common/http/ndjson';
import {
  ApiKeysetList,
  nextPageLink,
  parseKeysetPage,
  type KeysetParamRule,
} from '../common/pagination/keyset-page';
import { Reply } from '../common/http/reply';
import { APP_CONFIG, type AppConfig } from '../config';
import {
  ACCOUNT_EXPORT_MODELS,
  ACCOUNT_EXPORT_RESPONSE,
  AccountExport,
  ErasureService,
} from '../lifecycle';
import { acceptedErasure, ERASURE_ACCEPTED, ErasureDto, ProfileDto } from '../profile';
import { LinkedIdentityDto } from '../identity';
import { MyTeamDto } from '../team';
import { AdminService } from './admin.service';
import {
  CreatedUserDto,
  CreateUserDto,
  IdentityInputDto,
  IdentityListDto,
  PlanInputDto,
  PlanListDto,
  SUBJECT_PATTERN,
  UserDetailDto,
  UserSummaryDto,
} from './dto/admin.dto';

/** The 404 of every route that names a user by subject. */
const NO_SUCH_USER = ApiNotFoundResponse({
  type: ProblemDto,
  description: 'PROFILE_NOT_FOUND: no such user',
});

/** The list's `email` and `emailPrefix`. */
const emailRule: KeysetParamRule = (value) =>
  value.length === 0 || value.length > 254 ? 'must be 1-254 characters' : undefined;

/** The operator's users: registration, reads, plans, export and erasure. */
@ApiTags('admin')
@ApiExtraModels(...ACCOUNT_EXPORT_MODELS)
@Controller('admin/users')
@NeedsNoScope()
@Auth('operator')
export class AdminUsersController {
  constructor(
    private readonly admin: AdminService,
    private readonly erasures: ErasureService,
    private readonly accounts: AccountExport,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Every registered user, by subject; `email=` finds one by email, `emailPrefix=` those whose
   * email starts with it (case does not matter; both together: the user with that email if it
   * starts so).
   */
  @Get()
  @ApiQuery({
    name: 'email',
    required: false,
    description: 'Only the user with this email (case does not matter)',
    schema: { type: 'string', minLength: 1, maxLength: 254 },
  })
  @ApiQuery({
    name: 'emailPrefix',
    required: false,
    description:
      'Only the users whose email starts with this (case does not matter), still listed by subject',
    schema: { type: 'string', minLength: 1, maxLength: 254 },
  })
  @ApiKeysetList(UserSummaryDto, 'subject', SUBJECT_PATTERN.source, 'the users after that one')
  async listUsers(
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
  ): Promise<Reply<UserSummaryDto[]>> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'subject', valid: (v) => SUBJECT_PATTERN.test(v), rule: '<subject>' },
      params: { email: emailRule, emailPrefix: emailRule },
      order: 'users are listed by subject',
    });
    const { email, emailPrefix } = page.params;
    const users = await this.admin.listUsers({
      limit: page.limit + 1,
      ...(page.after !== undefined ? { afterSubject: page.after } : {}),
      ...(email !== undefined ? { email } : {}),
      ...(emailPrefix !== undefined ? { emailPrefix } : {}),
    });
    const shown = users.slice(0, page.limit);
    const last = shown.at(-1);
    return Reply.page(
      shown.map((u) => ({ ...u, createdAt: u.createdAt.toISOString() })),
      nextPageLink(
        req,
        raw,
        users.length > page.limit && last ? { subject: last.subject } : undefined,
      ),
    );
  }

  /**
   * Registers a user: its root profile and first root key, and places its data on a cluster (of
   * `region`, if given).
   */
  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED; UNKNOWN_REGION; NO_OPEN_CLUSTER: every cluster of the region is closed',
  })
  @ApiConflictResponse({ type: ProblemDto, description: 'DUPLICATE_USER: subject or email taken' })
  async createUser(@Body() body: CreateUserDto): Promise<CreatedUserDto> {
    const { profile, apiKey } = await this.admin.createUser(body.email, body.subject, body.region);
    return { profile: ProfileDto.from(profile), apiKey };
  }

  /**
   * A user: its root profile, keys (never secrets), team memberships, quota use, and the
   * identities of identity providers linked to it.
   */
  @Get(':subject')
  @ApiOkResponse({ type: UserDetailDto })
  @NO_SUCH_USER
  async getUser(@Param('subject') subject: string): Promise<UserDetailDto> {
    const user = await this.admin.getUser(subject);
    return {
      profile: ProfileDto.from(user.profile),
      keys: user.keys.map((key) => ApiKeyDto.from(key)),
      teams: user.teams.map((team) => MyTeamDto.from(team)),
      quota: { collections: user.collections },
      identities: user.identities.map((identity) => LinkedIdentityDto.from(identity)),
    };
  }

  /**
   * Replaces the identities of identity providers linked to a user: links the new ones (a token
   * of such an identity then acts as this user), unlinks the others. Idempotent. The instance
   * answering forgets what it cached of them at once; other instances within
   * OIDC_IDENTITY_CACHE_MS. A user created with keys keeps its data when it starts signing in
   * with tokens.
   */
  @Put(':subject/identities')
  @ApiBody({ type: [IdentityInputDto] })
  @ApiOkResponse({ type: [LinkedIdentityDto] })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'VALIDATION_FAILED; UNKNOWN_ISSUER: an issuer is not one of OIDC_ISSUERS',
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'IDENTITY_TAKEN: an identity belongs to another user (unlink it there first)',
  })
  @NO_SUCH_USER
  async setUserIdentities(
    @Param('subject') subject: string,
    @Body() identities: IdentityListDto,
  ): Promise<LinkedIdentityDto[]> {
    const linked = await this.admin.setIdentities(subject, identities);
    return linked.map((identity) => LinkedIdentityDto.from(identity));
  }

  /** Replaces the plans of a user's root profile (the only way plans change). */
  @Put(':subject/plans')
  @ApiBody({ type: [PlanInputDto] })
  @ApiBadRequestResponse({ type: ProblemDto })
  @NO_SUCH_USER
  async setUserPlans(
    @Param('subject') subject: string,
    @Body() plans: PlanListDto,
  ): Promise<ProfileDto> {
    return ProfileDto.from(await this.admin.setPlans(subject, plans));
  }

  /**
   * Exports a user's account (a data-access or portability request): everything an erasure would
   * delete — root and sub profiles, key metadata, projects, team memberships, webhooks, and the
   * items of every collection in every branch — as NDJSON in the format of GET /export, gzip
   * when Accept-Encoding allows. Never a secret; the change feed is not part of it.
   */
  @Get(':subject/export')
  @ApiOkResponse(ACCOUNT_EXPORT_RESPONSE)
  @NO_SUCH_USER
  async exportUser(
    @Param('subject') subject: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await sendLines(req, res, this.accounts.lines(subject));
  }

  /**
   * Erases a user: root and sub profiles, every key and identity, its projects, every collection of its
   * namespace in every branch, and its team memberships. Idempotent; resumed after a crash.
   */
  @Delete(':subject')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse(ERASURE_ACCEPTED)
  @NO_SUCH_USER
  async eraseUser(@Param('subject') subject: string): Promise<Reply<ErasureDto>> {
    return acceptedErasure(await this.erasures.start({ kind: 'user', id: subject }));
  }
}
