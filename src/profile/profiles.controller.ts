import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth, CurrentPrincipal } from '../auth';
import { ProblemDto, ValidationFailedError, type FieldError } from '../common/errors';
import { parseListQuery } from '../common/http/list-query';
import { isObjectIdHex } from '../common/mongo/object-id';
import { keysetLink } from '../common/pagination/keyset';
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
  @Auth('root', 'sub')
  @ApiQuery({
    name: 'clientId',
    required: false,
    description: 'Only the sub profiles of this OAuth client',
    schema: { type: 'string', pattern: NAME_SCHEMA_PATTERN },
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  })
  @ApiQuery({
    name: 'after',
    required: false,
    style: 'deepObject',
    explode: true,
    description: 'Keyset cursor `after[id]=<profile id>`: the profiles created after that one',
    schema: {
      type: 'object',
      properties: { id: { type: 'string', pattern: '^[0-9a-f]{24}$' } },
      additionalProperties: false,
    },
  })
  @ApiOkResponse({ type: [ProfileDto], description: 'A page; `Link` names the next one' })
  @ApiBadRequestResponse({ type: ProblemDto })
  async listSubProfiles(
    @CurrentPrincipal() principal: ProfilePrincipal,
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ProfileDto[]> {
    const query = parseListQuery(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      params: ['clientId'],
    });
    const errors: FieldError[] = [];
    for (const key of Object.keys(raw).filter((k) => /^(sort|sortOrder|before\[|filter\[)/.test(k)))
      errors.push({
        field: key,
        message: 'is not supported: sub profiles are listed in creation order',
      });
    for (const field of Object.keys(query.filters))
      if (!errors.some((e) => e.field === field))
        errors.push({ field, message: 'is not a recognised parameter' });
    for (const [field, value] of Object.entries(query.after))
      if (field !== 'id' || !isObjectIdHex(value))
        errors.push({ field: `after[${field}]`, message: 'the cursor is after[id]=<profile id>' });
    const { clientId } = query.params;
    if (clientId !== undefined && !PROFILE_NAME_PATTERN.test(clientId))
      errors.push({ field: 'clientId', message: `must be ${PROFILE_NAME_RULE}` });
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const { profiles, more } = await this.profiles.listSubProfiles(principal, {
      limit: query.limit,
      ...(clientId !== undefined ? { clientId } : {}),
      ...(query.after.id !== undefined ? { afterId: query.after.id } : {}),
    });
    const last = profiles.at(-1);
    if (more && last) {
      const path = (req.originalUrl ?? req.url).split('?')[0] ?? '';
      res.setHeader('Link', keysetLink(path, raw, 'after', { id: last.id }));
    }
    return profiles.map((profile) => ProfileDto.from(profile));
  }
}
