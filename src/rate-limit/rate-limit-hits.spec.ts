import { hitId, hitRange } from './rate-limit-hits';

describe('rate-limit hit ids', () => {
  const inRange = (range: { from: string; to: string }, id: string): boolean =>
    id >= range.from && id < range.to;

  it('put the window first, then the key, then the slot, with fixed widths', () => {
    expect(hitId(60_000, 'key:ab12', 7)).toBe('000000000060000|key:ab12|0000000007');
    expect(hitId(1_700_000_000_000, 'ip:::1', 0)).toBe('001700000000000|ip:::1|0000000000');
  });

  it('sort the slots of one key and window as numbers', () => {
    const ids = [0, 9, 10, 99, 100, 12345].map((slot) => hitId(60_000, 'k', slot));
    expect([...ids].sort()).toEqual(ids);
  });

  it('sort every id of an ended window before every id of a later one', () => {
    expect(hitId(60_000, 'zzz', 999) < hitId(120_000, 'a', 0)).toBe(true);
    expect(hitId(999_000, 'k', 0) < hitId(1_000_000, 'k', 0)).toBe(true);
  });

  it("hold exactly one key's slots of one window in its range, whatever the keys contain", () => {
    const range = hitRange(60_000, 'a');
    expect(inRange(range, hitId(60_000, 'a', 0))).toBe(true);
    expect(inRange(range, hitId(60_000, 'a', 9_999_999_999))).toBe(true);
    for (const other of ['a|0000000001', 'a|', 'ab', 'a%7C', 'a}', '', '%']) {
      expect(inRange(range, hitId(60_000, other, 1))).toBe(false);
    }
    expect(inRange(range, hitId(120_000, 'a', 0))).toBe(false);
    expect(inRange(hitRange(60_000, 'a|b'), hitId(60_000, 'a|b', 3))).toBe(true);
    expect(inRange(hitRange(60_000, 'a|b'), hitId(60_000, 'a', 3))).toBe(false);
    expect(hitId(60_000, 'a|b', 3)).not.toBe(hitId(60_000, 'a%7Cb', 3));
  });
});
