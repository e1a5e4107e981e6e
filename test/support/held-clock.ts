/**
 * Holds `Date` for code running in the test process (apps from createTestApp, stores built by a
 * test): it stands still just after the start of a fixed window aligned to the epoch, so
 * everything a test does falls in that window however long it takes, and the window ends only
 * when the test moves the clock on. Only `Date` is held: timers, `performance` and the driver's
 * own clock run on. Undo with `jest.useRealTimers()`.
 */
export function holdClockInWindow(windowMs: number): void {
  holdClock((Math.floor(Date.now() / windowMs) + 1) * windowMs + 10);
}

/** Holds `Date` at `at` (as above: only `Date`). */
export function holdClock(at = Date.now()): void {
  jest.useFakeTimers({
    now: at,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
}

/** Moves the held clock on by `ms`. */
export function moveClock(ms: number): void {
  jest.setSystemTime(Date.now() + ms);
}
