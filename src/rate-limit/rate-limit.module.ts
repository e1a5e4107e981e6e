import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { ThrottlerModule } from '@nestjs/throttler';
import type { Request } from 'express';
import type { Connection } from 'mongoose';
import { APP_CONFIG, type AppConfig } from '../config';
import { FixedWindowThrottlerStorage } from './fixed-window.storage';
import { KeyThrottlerGuard } from './key-throttler.guard';
import { MongoFixedWindowThrottlerStorage } from './mongo-fixed-window.storage';
import { RequestAllowance } from './request-allowance';

export interface RateLimitModuleOptions {
  /** Whose budget a request counts against (the composition root binds it to the API key). */
  trackerOf: (req: Request) => string;
  /**
   * Whether a request's budget is a publishable key's (RATE_LIMIT_PUBLISHABLE_MAX instead of
   * RATE_LIMIT_MAX); absent: every budget is RATE_LIMIT_MAX.
   */
  isPublishable?: (req: Request) => boolean;
  /**
   * How many requests the budget of a request that is not a publishable key's allows (the
   * composition root binds it to the tenant's limits); absent: RATE_LIMIT_MAX.
   */
  allowance?: Type<RequestAllowance>;
}

/**
 * The request budget (RATE_LIMIT_*): @nestjs/throttler on fixed windows, in the database or in
 * memory (RATE_LIMIT_STORE), and its guard, KeyThrottlerGuard, which the composition root puts
 * after authentication. See docs/limits.md, "Limits".
 */
/** Holds the composition root's RequestAllowance for the throttler's options. */
@Module({})
class RequestAllowanceModule {}

@Module({})
export class RateLimitModule {
  static forRoot(options: RateLimitModuleOptions): DynamicModule {
    const allowance: DynamicModule = {
      module: RequestAllowanceModule,
      providers: options.allowance
        ? [{ provide: RequestAllowance, useClass: options.allowance }]
        : [],
      exports: options.allowance ? [RequestAllowance] : [],
    };
    return {
      module: RateLimitModule,
      imports: [
        ThrottlerModule.forRootAsync({
          imports: [allowance],
          inject: [getConnectionToken(), APP_CONFIG, { token: RequestAllowance, optional: true }],
          useFactory: (
            connection: Connection,
            config: AppConfig,
            allowed: RequestAllowance | null,
          ) => ({
            throttlers: [
              {
                ttl: config.limits.rateLimitWindowMs,
                // No limit: Infinity, which KeyThrottlerGuard lets through without counting.
                limit: async (context) => {
                  const req = context.switchToHttp().getRequest<Request>();
                  if (options.isPublishable?.(req)) return config.limits.rateLimitPublishableMax;
                  if (!allowed) return config.limits.rateLimitMax;
                  return (await allowed.of(req)) ?? Infinity;
                },
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
