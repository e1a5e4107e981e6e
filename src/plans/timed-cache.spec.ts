import { TimedCache } from './timed-cache';

/** A read the test finishes when it chooses. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('TimedCache', () => {
  let clock: number;
  const cache = (ttlMs = 1000) => new TimedCache<number>({ ttlMs, max: 10, now: () => clock });

  beforeEach(() => {
    clock = 1_000_000;
  });

  it('reads once and answers from memory until ttlMs after the read began', async () => {
    const values = cache();
    const read = jest.fn().mockResolvedValueOnce(1).mockResolvedValueOnce(2);
    expect(await values.get('k', read)).toBe(1);
    clock += 999;
    expect(await values.get('k', read)).toBe(1);
    expect(read).toHaveBeenCalledTimes(1);
    clock += 1;
    expect(await values.get('k', read)).toBe(2);
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('counts the age from when the read began, not when it ended', async () => {
    const values = cache();
    const slow = deferred<number>();
    const pending = values.get('k', () => slow.promise);
    clock += 800;
    slow.resolve(1);
    expect(await pending).toBe(1);
    clock += 200;
    const read = jest.fn().mockResolvedValue(2);
    expect(await values.get('k', read)).toBe(2);
  });

  it('shares one read among callers that ask while it runs', async () => {
    const values = cache();
    const slow = deferred<number>();
    const read = jest.fn(() => slow.promise);
    const both = Promise.all([values.get('k', read), values.get('k', read)]);
    slow.resolve(7);
    expect(await both).toEqual([7, 7]);
    expect(read).toHaveBeenCalledTimes(1);
  });

  it('does not share a read that began ttlMs or more before, nor keeps it over a later one', async () => {
    const values = cache();
    const slow = deferred<number>();
    const old = values.get('k', () => slow.promise);
    clock += 1000;
    const fresh = jest.fn().mockResolvedValue(2);
    expect(await values.get('k', fresh)).toBe(2);
    expect(fresh).toHaveBeenCalledTimes(1);
    slow.resolve(1);
    expect(await old).toBe(1);
    expect(await values.get('k', () => Promise.resolve(3))).toBe(2);
  });

  it('keeps keys apart', async () => {
    const values = cache();
    expect(await values.get('a', () => Promise.resolve(1))).toBe(1);
    expect(await values.get('b', () => Promise.resolve(2))).toBe(2);
    expect(await values.get('a', () => Promise.resolve(3))).toBe(1);
  });

  it('reads again at once after forget, and neither keeps nor shares a read that began before it', async () => {
    const values = cache();
    const stale = deferred<number>();
    const before = values.get('k', () => stale.promise);
    values.forget('k');
    const fresh = jest.fn().mockResolvedValue(2);
    const after = values.get('k', fresh);
    expect(fresh).toHaveBeenCalledTimes(1);
    stale.resolve(1);
    expect(await before).toBe(1);
    expect(await after).toBe(2);
    // The value read before the forget was not kept; the one after it is.
    const again = jest.fn().mockResolvedValue(3);
    expect(await values.get('k', again)).toBe(2);
    expect(again).not.toHaveBeenCalled();
  });

  it('forgets every key when none is named', async () => {
    const values = cache();
    await values.get('a', () => Promise.resolve(1));
    await values.get('b', () => Promise.resolve(1));
    values.forget();
    expect(await values.get('a', () => Promise.resolve(2))).toBe(2);
    expect(await values.get('b', () => Promise.resolve(2))).toBe(2);
  });

  it('reads every time when ttlMs is 0', async () => {
    const values = cache(0);
    const read = jest.fn().mockResolvedValueOnce(1).mockResolvedValueOnce(2);
    expect(await values.get('k', read)).toBe(1);
    expect(await values.get('k', read)).toBe(2);
  });

  it('keeps nothing of a failed read', async () => {
    const values = cache();
    await expect(values.get('k', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await values.get('k', () => Promise.resolve(5))).toBe(5);
  });
});
