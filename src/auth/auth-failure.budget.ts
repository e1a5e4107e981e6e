/**
 * Pure parts of the failed-authentication budget (see AuthFailureLimiter): slot ids and the
 * in-process list of addresses known to be over budget. Windows are the epoch-aligned fixed
 * windows of rate-limit/fixed-window; slots are claimed with common/mongo/slots.
 */

/**
 * `_id` of one failure: `<address>|<windowStart>|<slot>`. A client address never contains `|`
 * (IPv4, IPv6 or the placeholder `unknown`), so the prefix of one address and window is unique.
 */
export function slotId(address: string, windowStart: number, slot: number): string {
  return `${slotPrefix(address, windowStart)}${slot}`;
}

export function slotPrefix(address: string, windowStart: number): string {
  return `${address}|${windowStart}|`;
}

/**
 * The `_id` range holding exactly the slots of one address and window: every id that starts with
 * the prefix, and no other, sorts at or after the prefix and before the prefix with its final `|`
 * replaced by the next character, `}`.
 */
export function slotIdRange(address: string, windowStart: number): { from: string; to: string } {
  const from = slotPrefix(address, windowStart);
  return { from, to: `${from.slice(0, -1)}}` };
}

/**
 * Addresses known to be over budget, each until its window ends; bounded so that a flood from
 * many addresses cannot grow the process. When full, ended entries go first, then the oldest.
 */
export class BlockedAddresses {
  private readonly until = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  /** The end of the address's blocked window, or null when it is not (or no longer) blocked. */
  blockedUntil(address: string, now: number): number | null {
    const end = this.until.get(address);
    if (end === undefined) return null;
    if (end <= now) {
      this.until.delete(address);
      return null;
    }
    return end;
  }

  block(address: string, end: number, now: number): void {
    // Re-inserting moves the address to the back of the eviction order.
    this.until.delete(address);
    if (this.until.size >= this.capacity) this.evict(now);
    this.until.set(address, end);
  }

  get size(): number {
    return this.until.size;
  }

  private evict(now: number): void {
    for (const [address, end] of this.until) {
      if (end <= now) this.until.delete(address);
    }
    while (this.until.size >= this.capacity) {
      const oldest = this.until.keys().next();
      if (oldest.done) return;
      this.until.delete(oldest.value);
    }
  }
}
