interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: `add` hands an item to `flush`, which writes a whole batch in one database
 * command. While no flush runs an item goes at once (no added latency when idle); items added
 * while one runs wait for it and go together in the next, at most `max` per flush. So under
 * concurrency N writers cost about one command per flush instead of N. `flush` answers one result
 * per item, in order; if it throws, every item of that batch is refused with its error.
 */
export class GroupCommit<T, R = void> {
  private queue: Pending<T, R>[] = [];
  private running = false;

  private readonly max: number;
  private readonly onIdle?: () => void;
  private readonly failsQueued?: (error: unknown) => boolean;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    options: {
      /** Items per flush at most (500). */
      max?: number;
      /** Called when the queue has run dry and nothing is being flushed. */
      onIdle?: () => void;
      /**
       * A failure that refuses the items queued meanwhile too (the database is unreachable):
       * they fail with it at once instead of waiting for their own flush to fail as well, so
       * a request waits for one failed command at most, not two.
       */
      failsQueued?: (error: unknown) => boolean;
    } = {},
  ) {
    this.max = options.max ?? 500;
    this.onIdle = options.onIdle;
    this.failsQueued = options.failsQueued;
  }

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.max);
      try {
        const results = await this.flush(batch.map((p) => p.item));
        batch.forEach((pending, i) => pending.resolve(results[i] as R));
      } catch (error) {
        const refused = this.failsQueued?.(error) ? [...batch, ...this.queue.splice(0)] : batch;
        for (const pending of refused) pending.reject(error);
      }
    }
    this.running = false;
    this.onIdle?.();
  }
}
