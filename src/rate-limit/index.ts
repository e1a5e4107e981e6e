export { RateLimitModule, type RateLimitModuleOptions } from './rate-limit.module';
export { KeyThrottlerGuard } from './key-throttler.guard';
export { RequestAllowance } from './request-allowance';
export { fixedWindow, secondsUntil, type FixedWindow } from './fixed-window';
export {
  markRateLimited,
  rateLimitReasonOf,
  RATE_LIMIT_REASONS,
  type RateLimitReason,
} from './rate-limited';
