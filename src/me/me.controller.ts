import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal, type Principal } from '../auth';
import { ApiKeyService } from '../auth/api-key.service';
import { APP_CONFIG, type AppConfig } from '../config';
import { CollectionsService } from '../data/collections.service';
import { MeDto, type MeKeyDto } from './me.dto';

/** Who am I: the principal of the request's key, its branch, the key and the quotas that apply. */
@ApiTags('me')
@Controller('me')
export class MeController {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly collections: CollectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Every kind of key may ask; nothing here is secret to the key that asks. */
  @Get()
  @Auth('root', 'sub', 'team', 'operator')
  @ApiOkResponse({
    type: MeDto,
    example: {
      kind: 'sub',
      subject: 'auth0|ada',
      clientId: 'web-app',
      accountId: 'acct-42',
      profileId: '665f1c2a9b1e8a0012345679',
      branch: '',
      boundBranch: '',
      key: { id: '665f1c2a9b1e8a0012345678', prefix: 'pds_a1b2c3', name: '', expiresAt: null },
      quota: {
        collections: { used: 3, limit: 100 },
        indexesPerCollection: 20,
        requestsPerWindow: 1000,
        windowMs: 60000,
      },
    },
  })
  async getMe(@CurrentPrincipal() principal: Principal): Promise<MeDto> {
    const { limits } = this.config;
    const quota = {
      collections: principal.kind === 'operator' ? null : await this.collections.quota(principal),
      indexesPerCollection: limits.maxIndexes,
      requestsPerWindow: limits.rateLimitMax,
      windowMs: limits.rateLimitWindowMs,
    };
    if (principal.kind === 'operator')
      return { kind: 'operator', branch: principal.branch, boundBranch: null, key: null, quota };
    const record = await this.keys.findById(principal.keyId);
    // The key was valid a moment ago (the guard read it); revoked since, it has no metadata left.
    const key: MeKeyDto | null = record && {
      id: record.id,
      prefix: record.prefix,
      name: record.name,
      expiresAt: record.expiresAt?.toISOString() ?? null,
    };
    const base = { branch: principal.branch, boundBranch: principal.boundBranch, key, quota };
    switch (principal.kind) {
      case 'root':
        return { kind: 'root', subject: principal.subject, ...base };
      case 'sub':
        return {
          kind: 'sub',
          subject: principal.subject,
          clientId: principal.clientId,
          accountId: principal.accountId,
          profileId: principal.profileId,
          ...base,
        };
      case 'team':
        return {
          kind: 'team',
          teamId: principal.teamId,
          ...(principal.actingSubject !== undefined
            ? { actingSubject: principal.actingSubject }
            : {}),
          ...base,
        };
    }
  }
}
