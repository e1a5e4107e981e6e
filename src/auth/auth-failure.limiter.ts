import { Inject, Injectable, Logger } from '@nestjs/common';
import { fixedWindow, secondsUntil } from '../rate-limit';
import { claimSlot } from '../common/mongo/slots';
import { APP_CONFIG, type AppConfig } from '../config';
import { AuthFailureRepository } from './auth-failure.repository';
import { BlockedAddresses } from './auth-failure.budget';

/** Addresses remembered as over budget per process; beyond it the oldest are forgotten. */
const BLOCKED_ADDRESSES_CAPACITY = 10_000;

/**
 * Failed authentications (unknown, revoked or expired key) per client address, in fixed windows
 * of AUTH_FAILURE_WINDOW_MS, counted in the database so that every instance shares one budget.
 * Only the failure path touches the database; a successful authentication costs one in-process
 * map lookup (`blockedFor`). An instance learns that an address is over budget at the first
 * failure it sees from it; from then on the guard answers that address's wrong keys 429 without
 * recording them and looks its uncached keys up at a paced rate (OverBudgetKeyLookups).
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly logger = new Logger(AuthFailureLimiter.name);
  private readonly max: number;
  private readonly windowMs: number;
  private readonly blocked = new BlockedAddresses(BLOCKED_ADDRESSES_CAPACITY);
  /** Start of the last window this process cleaned up for, so it cleans once per window. */
  private cleanedForWindow = -1;

  constructor(
    private readonly failures: AuthFailureRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.max = config.limits.authFailureMax;
    this.windowMs = config.limits.authFailureWindowMs;
  }

  /**
   * Seconds until the address's window ends when this process knows it is over budget, else
   * null. The only check on the success path: no database command.
   */
  blockedFor(address: string, now = Date.now()): number | null {
    const end = this.blocked.blockedUntil(address, now);
    return end === null ? null : secondsUntil(end, now);
  }

  /**
   * Counts one failure of the address. Returns the seconds until its window ends when the
   * budget was used up before this failure (the caller answers 429), else null (401).
   */
  async recordFailure(address: string, now = Date.now()): Promise<number | null> {
    const window = fixedWindow(now, this.windowMs);
    this.cleanUpOnce(window.start);
    const slot = await claimSlot(
      this.failures.slotsOf(address, window.start, window.end),
      this.max,
    );
    // The last slot uses the budget up: from the next request on, the address's keys go the
    // over-budget way, and its wrong keys cost no write.
    if (slot === null || slot === this.max - 1) this.blocked.block(address, window.end, now);
    return slot === null ? secondsUntil(window.end, now) : null;
  }

  /**
   * Deletes windows that ended before the previous one, once per window per process, off the
   * request's path. The previous window is kept as a margin for clocks of instances that differ.
   */
  private cleanUpOnce(windowStart: number): void {
    if (windowStart <= this.cleanedForWindow) return;
    this.cleanedForWindow = windowStart;
    this.failures
      .deleteWindowsEndedBy(new Date(windowStart - this.windowMs))
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'could not delete ended auth failure windows');
      });
  }
}
