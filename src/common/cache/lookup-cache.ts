import { LRUCache } from 'lru-cache';

/**
 * What an instance read lately of records that never change, only go (API keys, collection
 * registry entries): each trusted for `ttlMs` after its read, at most `max` of them (the least
 * recently used go first), none at all when `ttlMs` is 0. Only records that exist are kept, so
 * a new one is seen at once. When this instance removes records it forgets them once the removal
 * is written, and a lookup that overlapped a removal does not cache what it read: the next
 * request here never sees a removed record. Other instances see a removal within `ttlMs`.
 */
export class LookupCache<V extends object> {
  private readonly entries: LRUCache<string, V> | null;
  /** Removals so far (see `mark`). */
  private removals = 0;
  /** Reads under way, each with the removals count it began after (see `load`). */
  private readonly reading = new Map<string, { mark: number; read: Promise<V | null> }>();

  constructor({ ttlMs, max }: { ttlMs: number; max: number }) {
    // ttlResolution 0: every lookup reads the clock (performance.now, tens of nanoseconds). By
    // default lru-cache keeps a reading for 1 ms behind a timer it starts to forget it: under
    // load, a timer per cache per millisecond, about 1 % of a request's CPU.
    this.entries =
      ttlMs > 0 ? new LRUCache({ max, ttl: ttlMs, updateAgeOnGet: false, ttlResolution: 0 }) : null;
  }

  get(key: string): V | undefined {
    return this.entries?.get(key);
  }

  /**
   * The cached record, else `read()` — shared with the lookups of the same key under way that
   * began after the same removals, so a burst of requests with one uncached key costs one read,
   * while a lookup that starts after a removal never takes a read that began before it. Without
   * caching (`ttlMs` 0) every lookup reads.
   */
  load(key: string, read: () => Promise<V | null>): Promise<V | null> {
    const cached = this.get(key);
    if (cached) return Promise.resolve(cached);
    const mark = this.mark();
    const pending = this.reading.get(key);
    if (pending && pending.mark === mark) return pending.read;
    const shared = read().then((value) => {
      if (value) this.remember(key, value, mark);
      return value;
    });
    if (!this.entries) return shared;
    const entry = { mark, read: shared };
    this.reading.set(key, entry);
    const done = (): void => {
      if (this.reading.get(key) === entry) this.reading.delete(key);
    };
    shared.then(done, done);
    return shared;
  }

  /** Taken before a read: its result is cached only if no removal came in between. */
  mark(): number {
    return this.removals;
  }

  remember(key: string, value: V, mark: number): void {
    if (mark === this.removals) this.entries?.set(key, value);
  }

  /** Forgets the records `removed` matches; called once their removal is written. */
  forget(removed: (value: V, key: string) => boolean): void {
    this.removals++;
    if (!this.entries) return;
    for (const [key, value] of this.entries.entries())
      if (removed(value, key)) this.entries.delete(key);
  }

  /** Forgets one record by its key; called once its removal is written. */
  forgetKey(key: string): void {
    this.removals++;
    this.entries?.delete(key);
  }
}
