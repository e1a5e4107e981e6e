/**
 * Work that runs every `intervalMs` on every instance: the next run is scheduled when one ends,
 * so runs never overlap; the timer does not keep the process alive; `stop` waits for a run under
 * way. A failed run is reported and the next one comes as usual.
 *
 * With `idleMaxMs`, a run that resolves `false` (it found nothing to do) doubles the wait before
 * the next one, up to `idleMaxMs`; any other outcome, and `wake`, bring it back to `intervalMs`.
 * An idle instance then polls rarely, and one that has work polls at its usual pace.
 */
export class RepeatingTask {
  private timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (performance.now()); undefined when none is pending. */
  private dueAt: number | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private started = false;
  /** The wait before the next run, before jitter: `intervalMs`, or more while idle. */
  private delayMs: number;
  /** Woken while a run was under way: that run may have missed what woke it. */
  private wokenDuringRun = false;

  /** `jitter`: each delay is the current wait times a random factor within 1 ± jitter. */
  constructor(
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
    private readonly jitter = 0,
    private readonly idleMaxMs?: number,
  ) {
    this.delayMs = intervalMs;
  }

  start(): void {
    this.started = true;
    this.schedule();
  }

  /** Runs the work now; a call while it runs joins that run. */
  runNow(): Promise<void> {
    this.running ??= this.work()
      .then(
        (outcome) => this.settle(outcome === false),
        (error: unknown) => {
          this.settle(false);
          this.onError(error);
        },
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /**
   * There may be work (this instance just wrote something the task handles): the wait goes back
   * to `intervalMs`, and a run due later than that comes within it instead. Costs nothing when
   * the task runs at its usual pace already, so a busy instance can call it on every write.
   */
  wake(): void {
    if (this.running) this.wokenDuringRun = true;
    if (this.delayMs === this.intervalMs) return;
    this.delayMs = this.intervalMs;
    if (this.dueAt !== undefined && this.dueAt - performance.now() > this.intervalMs) {
      clearTimeout(this.timer);
      this.schedule();
    }
  }

  /** True once stop was called: long work checks it between steps. */
  get isStopped(): boolean {
    return this.stopped;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.dueAt = undefined;
    await this.running;
  }

  /** After a run: idle (it found nothing) doubles the wait, anything else resets it. */
  private settle(idle: boolean): void {
    const woken = this.wokenDuringRun;
    this.wokenDuringRun = false;
    this.delayMs =
      this.idleMaxMs !== undefined && idle && !woken
        ? Math.max(this.intervalMs, Math.min(this.delayMs * 2, this.idleMaxMs))
        : this.intervalMs;
  }

  private schedule(): void {
    if (this.stopped || !this.started) return;
    const factor = 1 + this.jitter * (2 * Math.random() - 1);
    const delay = Math.round(this.delayMs * factor);
    this.dueAt = performance.now() + delay;
    this.timer = setTimeout(() => {
      this.dueAt = undefined;
      void this.runNow().finally(() => this.schedule());
    }, delay);
    this.timer.unref();
  }
}
