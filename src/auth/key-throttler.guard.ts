import { Injectable, type ExecutionContext } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { markRateLimited } from '../common/http/rate-limited';
import { presentedKeyDigest } from './api-key.guard';

/**
 * Rate limit per API key (its digest, never the secret); requests without a key per client IP.
 * Runs after ApiKeyGuard, so the keys it counts are keys that authenticated.
 */
@Injectable()
export class KeyThrottlerGuard extends ThrottlerGuard {
  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    const request = req as unknown as Request;
    const digest = presentedKeyDigest(request);
    return Promise.resolve(digest ? `key:${digest}` : `ip:${request.ip ?? 'unknown'}`);
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    markRateLimited(context.switchToHttp().getResponse<Response>(), 'rate_limit');
    return super.throwThrottlingException(context, detail);
  }
}
