import { Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { Request } from 'express';
import { presentedKeyDigest } from './api-key.guard';

/** Rate limit per API key (its digest, never the secret); requests without a key per client IP. */
@Injectable()
export class KeyThrottlerGuard extends ThrottlerGuard {
  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    const request = req as unknown as Request;
    const digest = presentedKeyDigest(request);
    return Promise.resolve(digest ? `key:${digest}` : `ip:${request.ip ?? 'unknown'}`);
  }
}
