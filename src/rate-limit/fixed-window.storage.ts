import type { OnModuleDestroy } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

interface Window {
  hits: number;
  resetAt: number;
}

/**
 * Rate-limit counters for @nestjs/throttler: one fixed window of RATE_LIMIT_WINDOW_MS per key, in
 * memory. The library's default storage keeps one timestamp per hit and filters them on every
 * request, so its cost grows with the limit (a 10,000-per-minute key filters up to 10,000 entries
 * per request); a counter per window is O(1). Trade-off, documented in docs/limits.md: a client can
 * send up to twice the limit across a window boundary.
 */
export class FixedWindowThrottlerStorage implements ThrottlerStorage, OnModuleDestroy {
  private readonly windows = new Map<string, Window>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepIntervalMs = 60_000) {
    this.sweeper = setInterval(() => this.evictExpired(Date.now()), sweepIntervalMs);
    this.sweeper.unref();
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
  ): Promise<{
    totalHits: number;
    timeToExpire: number;
    isBlocked: boolean;
    timeToBlockExpire: number;
  }> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { hits: 0, resetAt: now + ttl };
      this.windows.set(key, window);
    }
    window.hits += 1;
    const timeToExpire = Math.max(1, Math.ceil((window.resetAt - now) / 1000));
    const isBlocked = window.hits > limit;
    return Promise.resolve({
      totalHits: window.hits,
      timeToExpire,
      isBlocked,
      timeToBlockExpire: isBlocked ? timeToExpire : 0,
    });
  }

  /** Forgets windows that have ended, so idle keys do not accumulate. */
  evictExpired(now: number): void {
    for (const [key, window] of this.windows) {
      if (window.resetAt <= now) this.windows.delete(key);
    }
  }

  get size(): number {
    return this.windows.size;
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }
}
