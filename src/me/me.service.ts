import { Inject, Injectable } from '@nestjs/common';
import { grantOf, tenantOf, type Principal } from '../auth';
import { heldScopes } from '../auth/access-grant';
import { ApiKeyService } from '../auth/api-key.service';
import { grantView } from '../auth/dto/api-key.dto';
import { APP_CONFIG, type AppConfig } from '../config';
import { ForbiddenError } from '../common/errors';
import { CollectionsService } from '../data';
import { FilesService } from '../files';
import type { MeCredentialDto, MeDto, MeKeyDto } from './me.dto';

/** Who a key or token acts as, where, how it authenticated, and the quotas that apply to it. */
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
    const scopes = heldScopes(grantOf(principal));
    if (principal.kind === 'operator')
      return {
        kind: 'operator',
        branch: principal.branch,
        boundBranch: null,
        authenticatedWith: { kind: 'key' },
        scopes,
        key: null,
        quota,
      };
    const { credential } = principal;
    const record = credential.kind === 'key' ? await this.keys.findById(credential.keyId) : null;
    // The key was valid a moment ago (the guard read it); revoked since, it has no metadata left.
    const key: MeKeyDto | null = record && {
      id: record.id,
      prefix: record.prefix,
      name: record.name,
      expiresAt: record.expiresAt?.toISOString() ?? null,
      ...grantView(record),
      lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
    };
    const authenticatedWith: MeCredentialDto =
      credential.kind === 'key'
        ? { kind: 'key' }
        : {
            kind: 'token',
            issuer: credential.issuer,
            tokenSubject: credential.subject,
            expiresAt: credential.expiresAt.toISOString(),
          };
    const base = {
      branch: principal.branch,
      boundBranch: principal.boundBranch,
      authenticatedWith,
      scopes,
      key,
      quota,
    };
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
      case 'publishable':
        // GET /me does not list the kind: a key in a web page learns nothing there.
        throw new ForbiddenError('A publishable key may not call this route.');
    }
  }
}
