import { Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { Request } from 'express';
import { digestApiKey } from '../../auth/api-key.secret';
import { presentedKey } from '../../auth/api-key.guard';

/** Rate limit per API key (its digest, never the secret); requests without a key per client IP. */
@Injectable()
export class KeyThrottlerGuard extends ThrottlerGuard {
  protected override getTracker(req: Record<string, unknown>): Promise<string> {
    const request = req as unknown as Request;
    const key = presentedKey(request);
    return Promise.resolve(key ? `key:${digestApiKey(key)}` : `ip:${request.ip ?? 'unknown'}`);
  }
}
