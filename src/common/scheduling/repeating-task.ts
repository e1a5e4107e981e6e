/**
 * Work that runs every `intervalMs` on every instance: the next run is scheduled when one ends,
 * so runs never overlap; the timer does not keep the process alive; `stop` waits for a run under
 * way. A failed run is reported and the next one comes as usual.
 */
export class RepeatingTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Runs the work now; a call while it runs joins that run. */
  runNow(): Promise<void> {
    this.running ??= this.work()
      .then(
        () => undefined,
        (error: unknown) => this.onError(error),
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** True once stop was called: long work checks it between steps. */
  get isStopped(): boolean {
    return this.stopped;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.runNow().finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }
}
