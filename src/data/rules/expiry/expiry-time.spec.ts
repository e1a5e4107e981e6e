import fc from 'fast-check';
import {
  digitRange,
  expiredFilter,
  hasExpired,
  liveFilter,
  utcTimeAtOrBefore,
} from './expiry-time';

/**
 * The oracle, written apart from the pattern: a string's parts compared in order with the
 * cutoff's, the fraction as a decimal string against the cutoff's milliseconds.
 */
const TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|[+-]00:00)$/;
function atOrBefore(text: string, cutoff: number): boolean {
  const m = TIME.exec(text);
  if (!m) return false;
  const parts = m.slice(1, 7).map(Number);
  const limits = [
    [0, 9999],
    [1, 12],
    [1, 31],
    [0, 23],
    [0, 59],
    [0, 59],
  ];
  if (parts.some((p, i) => p < (limits[i]?.[0] ?? 0) || p > (limits[i]?.[1] ?? 0))) return false;
  const d = new Date(cutoff);
  const bound = [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
  ];
  for (let i = 0; i < 6; i += 1) {
    if (parts[i] !== bound[i]) return (parts[i] ?? 0) < (bound[i] ?? 0);
  }
  const fraction = (m[7] ?? '').padEnd(30, '0');
  const ms = String(d.getUTCMilliseconds()).padStart(3, '0').padEnd(30, '0');
  return fraction <= ms;
}

const CUTOFF = Date.parse('2026-11-26T12:34:56.789Z');

describe('utcTimeAtOrBefore', () => {
  const pattern = new RegExp(utcTimeAtOrBefore(CUTOFF));

  it.each([
    ['2026-11-26T12:34:56.789Z', true],
    ['2026-11-26T12:34:56.7890000Z', true],
    ['2026-11-26T12:34:56.7890001Z', false],
    ['2026-11-26T12:34:56.79Z', false],
    ['2026-11-26T12:34:56.78Z', true],
    ['2026-11-26T12:34:56.7889999999Z', true],
    ['2026-11-26T12:34:56Z', true],
    ['2026-11-26T12:34:57Z', false],
    ['2026-11-26t12:34:56.000z', true],
    ['2026-11-26T12:34:56+00:00', true],
    ['2026-11-26T12:34:56-00:00', true],
    ['2025-12-31T23:59:59.999Z', true],
    ['0000-01-01T00:00:00Z', true],
    ['2026-11-27T00:00:00Z', false],
    // Not UTC, not RFC 3339, or out of range: never a time that expires.
    ['2020-01-01T00:00:00+01:00', false],
    ['2020-01-01 00:00:00Z', false],
    ['2020-01-01T00:00:00', false],
    ['2020-13-01T00:00:00Z', false],
    ['2020-01-32T00:00:00Z', false],
    ['2020-01-01T24:00:00Z', false],
    ['2020-01-01T23:59:60Z', false],
    ['2020-01-01T00:00:00.Z', false],
    ['x2020-01-01T00:00:00Z', false],
    ['2020-01-01T00:00:00Zx', false],
  ])('%s at or before the cutoff: %s', (text, expected) => {
    expect(pattern.test(text)).toBe(expected);
    expect(atOrBefore(text, CUTOFF)).toBe(expected);
  });

  it('agrees with the oracle on random times near random cutoffs', () => {
    const digits = (n: number) =>
      fc.integer({ min: 0, max: 10 ** n - 1 }).map((v) => String(v).padStart(n, '0'));
    const text = fc
      .tuple(
        fc.constantFrom('2026', '2025', '2027', '0000', '9999', '1999'),
        digits(2),
        digits(2),
        fc.constantFrom('T', 't', ' '),
        digits(2),
        digits(2),
        digits(2),
        fc.option(fc.stringMatching(/^[0-9]{1,8}$/)),
        fc.constantFrom('Z', 'z', '+00:00', '-00:00', '+01:00', ''),
      )
      .map(
        ([y, mo, d, t, h, mi, s, f, z]) =>
          `${y}-${mo}-${d}${t}${h}:${mi}:${s}${f === null ? '' : `.${f}`}${z}`,
      );
    const cutoff = fc.integer({
      min: Date.parse('2025-01-01T00:00:00Z'),
      max: Date.parse('2027-12-31T23:59:59.999Z'),
    });
    fc.assert(
      fc.property(
        text,
        cutoff,
        (t, c) => new RegExp(utcTimeAtOrBefore(c)).test(t) === atOrBefore(t, c),
      ),
      { numRuns: 3000 },
    );
  });

  it('follows the instant for every real UTC time', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Date.parse('9999-12-31T23:59:59.999Z') }),
        fc.integer({ min: -5000, max: 5000 }),
        (time, delta) => {
          const cutoff = time + delta;
          const text = new Date(time).toISOString();
          return new RegExp(utcTimeAtOrBefore(cutoff)).test(text) === time <= cutoff;
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('digitRange', () => {
  it('matches exactly the numbers of the range', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 9999 }), (a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        const re = new RegExp(
          `^${digitRange(String(low).padStart(4, '0'), String(high).padStart(4, '0'))}$`,
        );
        for (const probe of [low - 1, low, high, high + 1, Math.floor((low + high) / 2)]) {
          if (probe < 0 || probe > 9999) continue;
          if (re.test(String(probe).padStart(4, '0')) !== (probe >= low && probe <= high))
            return false;
        }
        return true;
      }),
    );
  });
});

describe('expiry filters', () => {
  const now = Date.parse('2026-11-26T12:00:00.000Z');

  it('compares _createdAt and _updatedAt as dates: time + afterSeconds ≤ now', () => {
    const rule = { field: '_createdAt', afterSeconds: 60 };
    expect(expiredFilter(rule, now)).toEqual({ _createdAt: { $lte: new Date(now - 60_000) } });
    expect(hasExpired(rule, { _createdAt: new Date(now - 60_000) }, now)).toBe(true);
    expect(hasExpired(rule, { _createdAt: new Date(now - 59_999) }, now)).toBe(false);
  });

  it('expires an item whose field holds a UTC time old enough, and nothing else', () => {
    const rule = { field: 'session.endsAt', afterSeconds: 3600 };
    expect(hasExpired(rule, { session: { endsAt: '2026-11-26T11:00:00Z' } }, now)).toBe(true);
    expect(hasExpired(rule, { session: { endsAt: '2026-11-26T11:00:00.001Z' } }, now)).toBe(false);
    for (const value of [null, 1_700_000_000, '2020-01-01T00:00:00+02:00', 'soon', true])
      expect(hasExpired(rule, { session: { endsAt: value } }, now)).toBe(false);
    expect(hasExpired(rule, {}, now)).toBe(false);
    expect(liveFilter(rule, now)).toEqual({ $nor: [expiredFilter(rule, now)] });
  });
});
