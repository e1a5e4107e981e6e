interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/** How a GroupCommit batches (all optional). */
export interface GroupCommitOptions {
  /** Items per flush at most (500). */
  max?: number;
  /** Least time between the starts of two flushes (0: the next starts as soon as one ends). */
  spacingMs?: number;
  /**
   * When idle, the first item waits for the end of the event loop's turn (`setImmediate`),
   * so that the items added in that turn go with it: the writes of requests whose earlier
   * step finished together (one flush of another group commit answers them all at once)
   * then share one command instead of two (the first alone, the rest after it).
   */
  gather?: boolean;
  /** Called when the queue has run dry and nothing is being flushed. */
  onIdle?: () => void;
  /**
   * A failure that refuses the items queued meanwhile too (the database is unreachable):
   * they fail with it at once instead of waiting for their own flush to fail as well, so
   * a request waits for one failed command at most, not two.
   */
  failsQueued?: (error: unknown) => boolean;
}

/**
 * Group commit: `add` hands an item to `flush`, which writes a whole batch in one database
 * command. While no flush runs an item goes at once (no added latency when idle); items added
 * while one runs wait for it and go together in the next, at most `max` per flush. So under
 * concurrency N writers cost about one command per flush instead of N. `flush` answers one result
 * per item, in order; if it throws, every item of that batch is refused with its error.
 * With `spacingMs` flushes also start at least that far apart: items added meanwhile wait for the
 * next one, so whatever the number of adds there is at most one command per `spacingMs`.
 */
export class GroupCommit<T, R = void> {
  private queue: Pending<T, R>[] = [];
  private running = false;

  private readonly max: number;
  private readonly spacingMs: number;
  private readonly gather: boolean;
  private readonly onIdle?: () => void;
  private readonly failsQueued?: (error: unknown) => boolean;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    options: GroupCommitOptions = {},
  ) {
    this.max = options.max ?? 500;
    this.spacingMs = options.spacingMs ?? 0;
    this.gather = options.gather ?? false;
    this.onIdle = options.onIdle;
    this.failsQueued = options.failsQueued;
  }

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.running) return;
      if (!this.gather) {
        void this.drain();
        return;
      }
      this.running = true;
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const started = performance.now();
      const batch = this.queue.splice(0, this.max);
      try {
        const results = await this.flush(batch.map((p) => p.item));
        batch.forEach((pending, i) => pending.resolve(results[i] as R));
      } catch (error) {
        const refused = this.failsQueued?.(error) ? [...batch, ...this.queue.splice(0)] : batch;
        for (const pending of refused) pending.reject(error);
      }
      // Still running while it waits, so that what comes meanwhile waits for the next flush.
      if (this.spacingMs > 0) await delay(started + this.spacingMs - performance.now());
    }
    this.running = false;
    this.onIdle?.();
  }
}

/** Resolves after `ms`; the timer does not keep the process alive. */
function delay(ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * One GroupCommit per key (a namespace, a collection): made when the key's first item comes and
 * dropped when its queue runs dry, so keys that are idle hold nothing.
 */
export class KeyedGroupCommits<K, T, R = void> {
  private readonly queues = new Map<K, GroupCommit<T, R>>();

  constructor(
    private readonly flush: (key: K, items: T[]) => Promise<R[]>,
    private readonly options: Omit<GroupCommitOptions, 'onIdle'> = {},
  ) {}

  add(key: K, item: T): Promise<R> {
    let queue = this.queues.get(key);
    if (!queue) {
      const created: GroupCommit<T, R> = new GroupCommit((items) => this.flush(key, items), {
        ...this.options,
        onIdle: () => {
          if (this.queues.get(key) === created) this.queues.delete(key);
        },
      });
      this.queues.set(key, created);
      queue = created;
    }
    return queue.add(item);
  }
}
