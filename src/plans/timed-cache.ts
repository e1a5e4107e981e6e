import { LRUCache } from 'lru-cache';

/**
 * What this instance read lately, each value trusted for `ttlMs` from the moment its read began
 * (so a change written anywhere is seen by every read that starts `ttlMs` after it), at most
 * `max` values (the least recently used go first). Refreshed lazily: a value is read again only
 * when asked for after it has expired, so an idle instance reads nothing. One read at a time per
 * key: callers that ask while a read is under way share it, unless it began `ttlMs` or more
 * before they asked (a read slower than that on a busy database would answer them with what was
 * there before a change they must see). `forget` drops a value this instance changed; a read that
 * began before it is neither kept nor shared with later callers.
 */
export class TimedCache<V> {
  private readonly values: LRUCache<string, { value: V; readAt: number }>;
  private readonly reading = new Map<string, { mark: number; began: number; read: Promise<V> }>();
  /** Counts `forget` calls: a read keeps its value only if none came while it ran. */
  private forgets = 0;

  constructor(private readonly options: { ttlMs: number; max: number; now?: () => number }) {
    this.values = new LRUCache({ max: options.max });
  }

  /** The value of `key`, read by `read` when absent or older than ttlMs. */
  get(key: string, read: () => Promise<V>): Promise<V> {
    const now = this.now();
    const cached = this.values.get(key);
    if (cached && now - cached.readAt < this.options.ttlMs) return Promise.resolve(cached.value);
    const mark = this.forgets;
    const pending = this.reading.get(key);
    if (pending && pending.mark === mark && now - pending.began < this.options.ttlMs)
      return pending.read;
    const entry = {
      mark,
      began: now,
      read: read().then((value) => {
        // A read that began before the one kept (a slow one, not shared) keeps nothing.
        const kept = this.values.get(key);
        if (mark === this.forgets && !(kept && kept.readAt > now))
          this.values.set(key, { value, readAt: now });
        return value;
      }),
    };
    this.reading.set(key, entry);
    const done = (): void => {
      if (this.reading.get(key) === entry) this.reading.delete(key);
    };
    entry.read.then(done, done);
    return entry.read;
  }

  /** Drops `key`'s value (every value when absent): the next ask reads again. */
  forget(key?: string): void {
    this.forgets++;
    if (key === undefined) this.values.clear();
    else this.values.delete(key);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
