import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../config';
import { MetricsTokenRequiredError } from './metrics.errors';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * With METRICS_TOKEN set, a scrape must send `Authorization: Bearer <token>`. Digests of equal
 * length are compared in constant time, so the time of a refusal tells nothing about the token.
 */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected?: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.metrics.token === undefined ? undefined : digest(config.metrics.token);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) return true;
    const http = context.switchToHttp();
    const authorization = http.getRequest<Request>().headers.authorization;
    const token =
      typeof authorization === 'string'
        ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1]
        : undefined;
    if (token !== undefined && timingSafeEqual(digest(token), this.expected)) return true;
    http.getResponse<Response>().setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
    throw new MetricsTokenRequiredError();
  }
}
