import { Injectable, type ExecutionContext } from '@nestjs/common';
import {
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerRequest,
} from '@nestjs/throttler';
import type { Response } from 'express';
import { markRateLimited } from './rate-limited';

/**
 * The request budget: one fixed window per tracker (RateLimitModuleOptions.trackerOf: the API
 * key's digest, else the client address), across all routes. Runs after authentication, so the
 * keys it counts are keys that authenticated.
 */
@Injectable()
export class KeyThrottlerGuard extends ThrottlerGuard {
  /** A budget without a limit (RequestAllowance answered null) is not counted at all. */
  protected override handleRequest(request: ThrottlerRequest): Promise<boolean> {
    if (request.limit === Infinity) return Promise.resolve(true);
    return super.handleRequest(request);
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    markRateLimited(context.switchToHttp().getResponse<Response>(), 'rate_limit');
    return super.throwThrottlingException(context, detail);
  }
}
