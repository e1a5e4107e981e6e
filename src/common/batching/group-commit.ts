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

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly max = 500,
    /** Called when the queue has run dry and nothing is being flushed. */
    private readonly onIdle?: () => void,
  ) {}

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
        for (const pending of batch) pending.reject(error);
      }
    }
    this.running = false;
    this.onIdle?.();
  }
}
