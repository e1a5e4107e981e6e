import { Controller, Get, Inject, Query, Req } from '@nestjs/common';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Auth, CurrentPrincipal, NeedsScope } from '../auth';
import { isObjectIdHex } from '../common/mongo/object-id';
import { ApiKeysetList, nextPageLink, parseKeysetPage } from '../common/pagination/keyset-page';
import { Reply } from '../common/http/reply';
import { APP_CONFIG, type AppConfig } from '../config';
import { ProfileDto } from './dto/profile.dto';
import { NAME_SCHEMA_PATTERN } from './dto/profile-request.dto';
import { PROFILE_NAME_PATTERN, PROFILE_NAME_RULE } from './profile.constants';
import type { ProfilePrincipal } from './profile-target';
import { ProfileService } from './profile.service';

/**
 * The sub profiles of a subject. A path of its own: every segment under /profile/ is an
 * accountId.
 */
@ApiTags('profile')
@Controller('profiles')
export class ProfilesController {
  constructor(
    private readonly profiles: ProfileService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Lists your subject's sub profiles in the request branch in creation order (root keys, or
   * sub keys whose profile holds admin:subject); `Link: <…>; rel="next"` while more follow.
   */
  @Get()
  @NeedsScope('profile:read')
  @Auth('root', 'sub')
  @ApiQuery({
    name: 'clientId',
    required: false,
    description: 'Only the sub profiles of this OAuth client',
    schema: { type: 'string', pattern: NAME_SCHEMA_PATTERN },
  })
  @ApiKeysetList(ProfileDto, 'id', '^[0-9a-f]{24}$', 'the profiles created after that one')
  async listSubProfiles(
    @CurrentPrincipal() principal: ProfilePrincipal,
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
  ): Promise<Reply<ProfileDto[]>> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'id', valid: isObjectIdHex, rule: '<profile id>' },
      params: {
        clientId: (value) =>
          PROFILE_NAME_PATTERN.test(value) ? undefined : `must be ${PROFILE_NAME_RULE}`,
      },
      order: 'sub profiles are listed in creation order',
    });
    const { clientId } = page.params;
    const { profiles, more } = await this.profiles.listSubProfiles(principal, {
      limit: page.limit,
      ...(clientId !== undefined ? { clientId } : {}),
      ...(page.after !== undefined ? { afterId: page.after } : {}),
    });
    const last = profiles.at(-1);
    return Reply.page(
      profiles.map((profile) => ProfileDto.from(profile)),
      nextPageLink(req, raw, more && last ? { id: last.id } : undefined),
    );
  }
}
