/** A fixed window of time, [start, end) in epoch milliseconds. */
export interface FixedWindow {
  start: number;
  end: number;
}

/**
 * The fixed window `now` falls in. Windows are aligned to multiples of the window length since
 * the epoch, so every instance puts an event in the same window without talking to the others.
 */
export function fixedWindow(now: number, windowMs: number): FixedWindow {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, end: start + windowMs };
}

/** Whole seconds until `end` for Retry-After; at least 1 so a client never retries at once. */
export function secondsUntil(end: number, now: number): number {
  return Math.max(1, Math.ceil((end - now) / 1000));
}
