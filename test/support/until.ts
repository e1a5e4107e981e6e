/**
 * Polls `probe` until it holds; fails after `withinMs`, saying what it waited for. Timed on the
 * monotonic clock, so a test that holds `Date` (test/support/held-clock.ts) can use it too.
 */
export async function until(
  what: string,
  probe: () => boolean | Promise<boolean>,
  withinMs = 20_000,
): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await probe())) {
    if (performance.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
