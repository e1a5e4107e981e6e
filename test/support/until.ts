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

/**
 * Polls `probe` until it holds, for a change that every request sent `boundMs` or more after
 * `since` must see (a cache's bound, an end time): a probe sent that late whose answer does not
 * hold it fails at once, however slow the machine; one sent earlier may see either, so no wall
 * time is asserted. `clock` is the one `since` was read on.
 */
export async function untilSeenAfter(
  what: string,
  since: number,
  boundMs: number,
  probe: () => Promise<boolean>,
  clock: () => number = () => performance.now(),
): Promise<void> {
  await until(
    what,
    async () => {
      const sent = clock();
      if (await probe()) return true;
      const after = sent - since;
      if (after >= boundMs)
        throw new Error(
          `${what}: a request sent ${Math.round(after)} ms after the change did not see it (bound ${boundMs} ms)`,
        );
      return false;
    },
    boundMs + 20_000,
  );
}
