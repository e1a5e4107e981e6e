import { LookupCache } from './lookup-cache';

describe('LookupCache', () => {
  afterEach(() => jest.useRealTimers());

  it('trusts a record for ttlMs after its read, then not', () => {
    // The clock is the test's, so a pause of the process cannot age the entry between two lines.
    // lru-cache takes its clock when it loads: load it afresh once the clock is fake.
    jest.useFakeTimers();
    let Cache!: typeof LookupCache;
    jest.isolateModules(() => {
      ({ LookupCache: Cache } =
        jest.requireActual<typeof import('./lookup-cache')>('./lookup-cache'));
    });
    const cache = new Cache<{ v: number }>({ ttlMs: 60, max: 10 });
    // A fake clock starts at 0, which lru-cache reads as "no start time".
    jest.advanceTimersByTime(1);
    cache.remember('a', { v: 1 }, cache.mark());
    jest.advanceTimersByTime(60);
    expect(cache.get('a')).toEqual({ v: 1 });
    jest.advanceTimersByTime(1);
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps at most max records, the least recently used going first', () => {
    const cache = new LookupCache<{ v: number }>({ ttlMs: 60_000, max: 2 });
    cache.remember('a', { v: 1 }, cache.mark());
    cache.remember('b', { v: 2 }, cache.mark());
    cache.get('a');
    cache.remember('c', { v: 3 }, cache.mark());
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual({ v: 1 });
    expect(cache.get('c')).toEqual({ v: 3 });
  });

  it('keeps nothing when ttlMs is 0', () => {
    const cache = new LookupCache<{ v: number }>({ ttlMs: 0, max: 2 });
    cache.remember('a', { v: 1 }, cache.mark());
    expect(cache.get('a')).toBeUndefined();
  });

  it('forgets removed records, by key or by what they hold', () => {
    const cache = new LookupCache<{ owner: string }>({ ttlMs: 60_000, max: 10 });
    for (const [key, owner] of [
      ['k1', 'ada'],
      ['k2', 'ada'],
      ['k3', 'bob'],
    ] as const)
      cache.remember(key, { owner }, cache.mark());
    cache.forget((record) => record.owner === 'ada');
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.get('k2')).toBeUndefined();
    expect(cache.get('k3')).toEqual({ owner: 'bob' });
    cache.forgetKey('k3');
    expect(cache.get('k3')).toBeUndefined();
  });

  it('does not cache what a read that overlapped a removal found', () => {
    const cache = new LookupCache<{ v: number }>({ ttlMs: 60_000, max: 10 });
    const mark = cache.mark();
    // The read is under way; the record is removed and forgotten meanwhile.
    cache.forgetKey('a');
    cache.remember('a', { v: 1 }, mark);
    expect(cache.get('a')).toBeUndefined();
    cache.remember('a', { v: 1 }, cache.mark());
    expect(cache.get('a')).toEqual({ v: 1 });
  });

  describe('load', () => {
    /** A read that resolves when told to, counting how often it was started. */
    function gatedRead(value: { v: number } | null) {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const read = {
        started: 0,
        open: () => open(),
        run: async () => {
          read.started += 1;
          await gate;
          return value;
        },
      };
      return read;
    }

    it('shares one read among concurrent lookups of a key, and caches what it found', async () => {
      const cache = new LookupCache<{ v: number }>({ ttlMs: 60_000, max: 10 });
      const read = gatedRead({ v: 1 });
      const lookups = [1, 2, 3].map(() => cache.load('a', read.run));
      read.open();
      expect(await Promise.all(lookups)).toEqual([{ v: 1 }, { v: 1 }, { v: 1 }]);
      expect(read.started).toBe(1);
      expect(await cache.load('a', read.run)).toEqual({ v: 1 });
      expect(read.started).toBe(1);
    });

    it('never hands a lookup that began after a removal a read that began before it', async () => {
      const cache = new LookupCache<{ v: number }>({ ttlMs: 60_000, max: 10 });
      const before = gatedRead({ v: 1 });
      const early = cache.load('a', before.run);
      cache.forgetKey('a');
      const after = gatedRead(null);
      const late = cache.load('a', after.run);
      before.open();
      after.open();
      expect(await early).toEqual({ v: 1 });
      expect(await late).toBeNull();
      expect([before.started, after.started]).toEqual([1, 1]);
      // The read that overlapped the removal cached nothing.
      expect(cache.get('a')).toBeUndefined();
    });

    it('reads on every lookup when nothing is cached (ttlMs 0)', async () => {
      const cache = new LookupCache<{ v: number }>({ ttlMs: 0, max: 10 });
      const read = gatedRead({ v: 1 });
      const lookups = [cache.load('a', read.run), cache.load('a', read.run)];
      read.open();
      await Promise.all(lookups);
      expect(read.started).toBe(2);
    });

    it('does not remember a missing record, so the next lookup reads again', async () => {
      const cache = new LookupCache<{ v: number }>({ ttlMs: 60_000, max: 10 });
      const read = gatedRead(null);
      read.open();
      expect(await cache.load('a', read.run)).toBeNull();
      expect(await cache.load('a', read.run)).toBeNull();
      expect(read.started).toBe(2);
    });
  });
});
