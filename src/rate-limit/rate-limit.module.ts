import { Module, type DynamicModule } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { ThrottlerModule } from '@nestjs/throttler';
import type { Request } from 'express';
import type { Connection } from 'mongoose';
import { APP_CONFIG, type AppConfig } from '../config';
import { FixedWindowThrottlerStorage } from './fixed-window.storage';
import { KeyThrottlerGuard } from './key-throttler.guard';
import { MongoFixedWindowThrottlerStorage } from './mongo-fixed-window.storage';

export interface RateLimitModuleOptions {
  /** Whose budget a request counts against (the composition root binds it to the API key). */
  trackerOf: (req: Request) => string;
  /**
   * Whether a request's budget is a publishable key's (RATE_LIMIT_PUBLISHABLE_MAX instead of
   * RATE_LIMIT_MAX); absent: every budget is RATE_LIMIT_MAX.
   */
  isPublishable?: (req: Request) => boolean;
}

/**
 * The request budget (RATE_LIMIT_*): @nestjs/throttler on fixed windows, in the database or in
 * memory (RATE_LIMIT_STORE), and its guard, KeyThrottlerGuard, which the composition root puts
 * after authentication. See README "Limits".
 */
@Module({})
export class RateLimitModule {
  static forRoot(options: RateLimitModuleOptions): DynamicModule {
    return {
      module: RateLimitModule,
      imports: [
        ThrottlerModule.forRootAsync({
          inject: [getConnectionToken(), APP_CONFIG],
          useFactory: (connection: Connection, config: AppConfig) => ({
            throttlers: [
              {
                ttl: config.limits.rateLimitWindowMs,
                limit: (context) =>
                  options.isPublishable?.(context.switchToHttp().getRequest<Request>())
                    ? config.limits.rateLimitPublishableMax
                    : config.limits.rateLimitMax,
              },
            ],
            // RATE_LIMIT_STORE: in the database, one budget per key shared by every instance.
            storage:
              config.limits.rateLimitStore === 'mongo'
                ? MongoFixedWindowThrottlerStorage.on(connection, config.limits.rateLimitChunk)
                : new FixedWindowThrottlerStorage(),
            getTracker: (req) => Promise.resolve(options.trackerOf(req as unknown as Request)),
            // One budget per key across all routes (the default key is per key *and* route).
            generateKey: (_context, tracker) => tracker,
          }),
        }),
      ],
      providers: [KeyThrottlerGuard],
      exports: [KeyThrottlerGuard],
    };
  }
}
