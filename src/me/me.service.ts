import { Inject, Injectable } from '@nestjs/common';
import { tenantOf, type Principal } from '../auth';
import { ApiKeyService } from '../auth/api-key.service';
import { grantView } from '../auth/dto/api-key.dto';
import { APP_CONFIG, type AppConfig } from '../config';
import { CollectionsService } from '../data';
import { FilesService } from '../files';
import type { MeDto, MeKeyDto } from './me.dto';

/** Who a key acts as, where, the key itself and the quotas that apply to it. */
@Injectable()
export class MeService {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly collections: CollectionsService,
    private readonly files: FilesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async describe(principal: Principal): Promise<MeDto> {
    const { limits } = this.config;
    const quota = {
      collections:
        principal.kind === 'operator' ? null : await this.collections.visibleQuota(principal),
      files: principal.kind === 'operator' ? null : await this.files.usage(tenantOf(principal)),
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
      ...grantView(record),
      lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
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
