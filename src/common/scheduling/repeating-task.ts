/**
 * Work that runs every `intervalMs` on every instance: the next run is scheduled when one ends,
 * so runs never overlap; the timer does not keep the process alive; `stop` waits for a run under
 * way. A failed run is reported and the next one comes as usual.
 */
export class RepeatingTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  /** `jitter`: each delay is `intervalMs` times a random factor within 1 ± jitter. */
  constructor(
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
    private readonly jitter = 0,
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
    const factor = 1 + this.jitter * (2 * Math.random() - 1);
    this.timer = setTimeout(
      () => {
        void this.runNow().finally(() => this.schedule());
      },
      Math.round(this.intervalMs * factor),
    );
    this.timer.unref();
  }
}
