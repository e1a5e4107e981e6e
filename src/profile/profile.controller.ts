import {
  applyDecorators,
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
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type Principal, NeedsScope } from '../auth';
import { ProblemDto, ValidationFailedError } from '../common/errors';
import { IfMatchHeader } from '../common/http/conditional';
import type { IfMatch } from '../common/http/etag';
import { ApiConditional } from '../common/http/openapi-conditional';
import { Reply } from '../common/http/reply';
import { ACCOUNT_ERASURE, type AccountErasure } from './account-erasure.port';
import {
  acceptedErasure,
  ConfirmErasureDto,
  ERASURE_ACCEPTED,
  ErasureDto,
} from './dto/erasure.dto';
import { ProfileDto } from './dto/profile.dto';
import {
  CreateSubProfileDto,
  ProfileGroupDto,
  ProfileTargetQueryDto,
  SubProfileParamsDto,
  SubProfileDeletionQueryDto,
  SubProfileQueryDto,
  UpdateProfileDto,
} from './dto/profile-request.dto';
import { profileETag } from './profile-etag';
import { ProfileDeletionService } from './profile-deletion.service';
import { ProfileService } from './profile.service';
import type { ProfilePrincipal } from './profile-target';
import { ProfileUpdateService } from './profile-update.service';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

const NOT_FOUND = 'PROFILE_NOT_FOUND: no such profile of your subject in the request branch';
const TARGET_400 = 'Invalid body or query, or only one of clientId and accountId';

/** The 409 of a sub profile named by accountId alone. */
const AMBIGUOUS_ACCOUNT = ApiConflictResponse({
  type: ProblemDto,
  description: 'AMBIGUOUS_MATCH: the accountId exists under several clientIds; add clientId',
});

/** A read or change of your profile, or of the one clientId and accountId name. */
function ApiTargetedProfile(kind: 'read' | 'write'): MethodDecorator {
  return applyDecorators(
    ApiConditional(kind),
    ApiOkResponse({ type: ProfileDto }),
    ApiBadRequestResponse({ type: ProblemDto, description: TARGET_400 }),
    ApiNotFoundResponse({ type: ProblemDto, description: NOT_FOUND }),
  );
}

@ApiTags('profile')
@Controller('profile')
export class ProfileController {
  constructor(
    private readonly profiles: ProfileService,
    private readonly updates: ProfileUpdateService,
    private readonly deletion: ProfileDeletionService,
    @Inject(ACCOUNT_ERASURE) private readonly erasure: AccountErasure,
  ) {}

  /** Reads your own profile (root key: the root profile; sub key: its sub profile), or the targeted one. */
  @Get()
  @NeedsScope('profile:read')
  @Auth('root', 'sub')
  @ApiTargetedProfile('read')
  async getProfile(
    @CurrentPrincipal() principal: ProfilePrincipal,
    @Query() target: ProfileTargetQueryDto,
  ): Promise<Reply<ProfileDto>> {
    const profile = await this.profiles.getProfile(principal, target);
    return Reply.read(profileETag(profile), () => ProfileDto.from(profile));
  }

  /** Reads a sub profile of your subject in the request branch by accountId (and clientId). */
  @Get(':accountId')
  @NeedsScope('profile:read')
  @Auth('root', 'sub')
  @ApiConditional('read')
  @ApiOkResponse({ type: ProfileDto })
  @AMBIGUOUS_ACCOUNT
  @ApiNotFoundResponse({ type: ProblemDto, description: NOT_FOUND })
  async getSubProfile(
    @CurrentPrincipal() principal: ProfilePrincipal,
    @Param() params: SubProfileParamsDto,
    @Query() query: SubProfileQueryDto,
  ): Promise<Reply<ProfileDto>> {
    const profile = await this.profiles.getSubProfile(principal, params.accountId, query.clientId);
    return Reply.read(profileETag(profile), () => ProfileDto.from(profile));
  }

  /** Creates a sub profile in the request branch (root keys only). */
  @Post()
  @NeedsScope('profile:write')
  @Auth('root')
  @HttpCode(HttpStatus.OK)
  @ApiConditional('create')
  @ApiBody({
    type: CreateSubProfileDto,
    examples: {
      minimal: {
        value: { accountId: 'acct-42', clientId: 'mobile-app', email: 'grace@example.com' },
      },
      full: {
        value: {
          accountId: 'acct-43',
          clientId: 'mobile-app',
          email: 'alan@example.com',
          groups: ['beta-testers'],
          userMetadata: { locale: 'en-GB' },
        },
      },
    },
  })
  @ApiOkResponse({ type: ProfileDto })
  @ApiBadRequestResponse({ type: ProblemDto })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'PROFILE_EXISTS: the sub profile exists already; `existingId` names it',
  })
  async createSubProfile(
    @CurrentPrincipal() principal: RootPrincipal,
    @Body() body: CreateSubProfileDto,
  ): Promise<Reply<ProfileDto>> {
    const profile = await this.profiles.createSubProfile(principal, body);
    return Reply.written(profileETag(profile), ProfileDto.from(profile));
  }

  /**
   * Updates avatar, settings (merge patch) and metadata (merge patch, root keys only) of your
   * profile or, with clientId and accountId, of that sub profile.
   */
  @Put()
  @NeedsScope('profile:write')
  @Auth('root', 'sub')
  @ApiConditional('write')
  @ApiBody({
    type: UpdateProfileDto,
    examples: {
      settings: { value: { settings: { theme: 'dark', notifications: { email: false } } } },
      removeKey: { summary: 'null removes a key', value: { settings: { theme: null } } },
      metadata: { summary: 'root keys only', value: { metadata: { crmId: '42' } } },
      avatar: { value: { avatar: 'https://example.com/me.png' } },
    },
  })
  @ApiOkResponse({ type: ProfileDto })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'Invalid field, JSON rule or limit broken (before or after the merge), or bad target',
  })
  @ApiNotFoundResponse({ type: ProblemDto, description: NOT_FOUND })
  @ApiConflictResponse({ type: ProblemDto, description: 'The profile kept changing concurrently' })
  async updateProfile(
    @CurrentPrincipal() principal: ProfilePrincipal,
    @Query() target: ProfileTargetQueryDto,
    @Body() body: UpdateProfileDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<ProfileDto>> {
    const profile = await this.updates.updateProfile(principal, target, body, ifMatch);
    return Reply.written(profileETag(profile), ProfileDto.from(profile));
  }

  /**
   * Erases your whole account, as the operator's DELETE /admin/users/{subject} does: every key
   * stops working before the answer. The body must name your subject. Root keys not bound to a
   * branch only (an account spans every branch).
   */
  @Delete()
  @NeedsScope('profile:write')
  @Auth('root')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse(ERASURE_ACCEPTED)
  @ApiBadRequestResponse({ type: ProblemDto, description: '`confirm` is not your subject' })
  async eraseOwnAccount(
    @CurrentPrincipal() principal: RootPrincipal,
    @Body() body: ConfirmErasureDto,
  ): Promise<Reply<ErasureDto>> {
    return acceptedErasure(await this.erasure.eraseOwnAccount(principal, body.confirm));
  }

  /** Adds a group (root keys, or sub keys holding admin:subject); adding a present group is a no-op. */
  @Put('groups')
  @NeedsScope('profile:write')
  @Auth('root', 'sub')
  @ApiTargetedProfile('write')
  @ApiConflictResponse({ type: ProblemDto, description: 'The profile holds 100 groups already' })
  async addProfileGroup(
    @CurrentPrincipal() principal: ProfilePrincipal,
    @Query() target: ProfileTargetQueryDto,
    @Body() body: ProfileGroupDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<ProfileDto>> {
    const profile = await this.updates.changeGroup(principal, target, body.group, 'add', ifMatch);
    return Reply.written(profileETag(profile), ProfileDto.from(profile));
  }

  /** Removes a group (root keys, or sub keys holding admin:subject); removing an absent group is a no-op. */
  @Delete('groups')
  @NeedsScope('profile:write')
  @Auth('root', 'sub')
  @ApiTargetedProfile('write')
  async removeProfileGroup(
    @CurrentPrincipal() principal: ProfilePrincipal,
    @Query() target: ProfileTargetQueryDto,
    @Body() body: ProfileGroupDto,
    @IfMatchHeader() ifMatch: IfMatch,
  ): Promise<Reply<ProfileDto>> {
    const profile = await this.updates.changeGroup(
      principal,
      target,
      body.group,
      'remove',
      ifMatch,
    );
    return Reply.written(profileETag(profile), ProfileDto.from(profile));
  }

  /**
   * Deletes a sub profile of your subject in the request branch (root keys only) and revokes
   * every key acting as it. The items it owned stay, owned by its accountId, unless
   * `purgeData=true`: then the items whose owner field (`authField`, default `userId`) holds its
   * accountId are deleted in every collection of the namespace in that branch, before the
   * profile. Without clientId the accountId must be unique among the sub profiles (else 409).
   */
  @Delete(':accountId')
  @NeedsScope('profile:write')
  @Auth('root')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({
    description:
      'Deleted; its keys no longer work. With purgeData, `X-Items-Deleted` says how many items went.',
    headers: {
      'X-Items-Deleted': {
        description: 'With purgeData=true: the number of items deleted',
        schema: { type: 'integer', minimum: 0 },
      },
    },
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A bad clientId, purgeData or authField',
  })
  @AMBIGUOUS_ACCOUNT
  @ApiNotFoundResponse({ type: ProblemDto, description: NOT_FOUND })
  async deleteSubProfile(
    @CurrentPrincipal() principal: RootPrincipal,
    @Param() params: SubProfileParamsDto,
    @Query() query: SubProfileDeletionQueryDto,
  ): Promise<Reply<void>> {
    if (query.purgeData !== 'true' && query.authField !== undefined)
      throw new ValidationFailedError([
        { field: 'authField', message: 'goes with purgeData=true' },
      ]);
    const { itemsDeleted } = await this.deletion.deleteSubProfile(
      principal,
      params.accountId,
      query.clientId,
      query.purgeData === 'true' ? { kind: 'purge', authField: query.authField } : { kind: 'keep' },
    );
    return Reply.of(undefined).header(
      'X-Items-Deleted',
      query.purgeData === 'true' ? String(itemsDeleted) : undefined,
    );
  }
}
