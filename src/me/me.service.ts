import { Inject, Injectable } from '@nestjs/common';
import { grantOf, tenantOf, type Principal } from '../auth';
import { heldScopes } from '../auth/access-grant';
import { ApiKeyService } from '../auth/api-key.service';
import { grantView } from '../auth/dto/api-key.dto';
import { APP_CONFIG, type AppConfig } from '../config';
import { ForbiddenError } from '../common/errors';
import { CollectionsService } from '../data';
import { FilesService } from '../files';
import {
  deploymentLimits,
  PLAN_LIMIT_NAMES,
  TenantLimits,
  type ActiveLimits,
  type PlanLimitName,
} from '../plans';
import { WebhooksService } from '../webhooks/webhooks.service';
import type { MeCredentialDto, MeDto, MeKeyDto, MeLimitsDto, MePlanDto } from './me.dto';

/** What GET /me counts of the limits it shows. */
type LimitUsage = Partial<Record<PlanLimitName, number>>;

/** Who a key or token acts as, where, how it authenticated, and the quotas that apply to it. */
@Injectable()
export class MeService {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly collections: CollectionsService,
    private readonly files: FilesService,
    private readonly webhooks: WebhooksService,
    private readonly tenantLimits: TenantLimits,
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
        plan: null,
        limits: limitsView({ plan: null, limits: deploymentLimits(this.config) }, {}),
      };
    if (principal.kind === 'publishable')
      // GET /me does not list the kind: a key in a web page learns nothing there.
      throw new ForbiddenError('A publishable key may not call this route.');
    const [active, webhooks] = await Promise.all([
      this.tenantLimits.of(tenantOf(principal)),
      this.webhooks.countVisible(principal),
    ]);
    const usage: LimitUsage = {
      ...(quota.collections ? { collections: quota.collections.used } : {}),
      ...(quota.files ? { fileBytes: quota.files.used } : {}),
      webhooks,
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
      plan: planView(active),
      limits: limitsView(active, usage),
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
    }
  }
}

function planView({ plan }: ActiveLimits): MePlanDto | null {
  return (
    plan && {
      name: plan.name,
      since: plan.since.toISOString(),
      until: plan.until?.toISOString() ?? null,
    }
  );
}

function limitsView({ limits }: ActiveLimits, usage: LimitUsage): MeLimitsDto {
  const view = {} as MeLimitsDto;
  for (const name of PLAN_LIMIT_NAMES) {
    const used = usage[name];
    view[name] = { limit: limits[name], ...(used !== undefined ? { used } : {}) };
  }
  return view;
}
