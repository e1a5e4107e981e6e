import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { tenantOf, type RequestWithPrincipal } from './auth';
import { APP_CONFIG, type AppConfig } from './config';
import { TenantLimits } from './plans';
import { RequestAllowance } from './rate-limit';

/**
 * The request budget of a key is its tenant's `requestsPerWindow` (its plan's, else
 * RATE_LIMIT_MAX), read through TenantLimits, which answers from memory. The operator's key and
 * requests without a key (public routes, counted per address) have RATE_LIMIT_MAX.
 */
@Injectable()
export class TenantRequestAllowance extends RequestAllowance {
  constructor(
    private readonly limits: TenantLimits,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async of(req: Request): Promise<number | null> {
    const principal = (req as RequestWithPrincipal).principal;
    if (!principal || principal.kind === 'operator') return this.config.limits.rateLimitMax;
    return (await this.limits.of(tenantOf(principal))).limits.requestsPerWindow;
  }
}
