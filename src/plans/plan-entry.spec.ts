import { activeEntry, type PlanEntry } from './plan-entry';

const at = (iso: string) => new Date(iso);
const entry = (planName: string, since: string, until: string | null): PlanEntry => ({
  planName,
  since: at(since),
  until: until === null ? null : at(until),
});

describe('activeEntry', () => {
  const now = at('2026-06-01T00:00:00Z');

  it('is null without entries', () => {
    expect(activeEntry([], now)).toBeNull();
  });

  it('takes an entry whose since ≤ now < until', () => {
    const pro = entry('pro', '2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z');
    expect(activeEntry([pro], now)).toBe(pro);
  });

  it('counts since as inside and until as outside', () => {
    expect(
      activeEntry([entry('a', '2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z')], now),
    ).not.toBeNull();
    expect(
      activeEntry([entry('a', '2026-05-01T00:00:00Z', '2026-06-01T00:00:00Z')], now),
    ).toBeNull();
  });

  it('skips entries that have not begun or have ended', () => {
    const future = entry('later', '2026-07-01T00:00:00Z', null);
    const past = entry('earlier', '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
    expect(activeEntry([future, past], now)).toBeNull();
  });

  it('treats an absent until as never ending', () => {
    const forever = entry('free', '2020-01-01T00:00:00Z', null);
    expect(activeEntry([forever], now)).toBe(forever);
  });

  it('takes the latest since of several active entries, wherever it is listed', () => {
    const base = entry('base', '2026-01-01T00:00:00Z', null);
    const upgrade = entry('pro', '2026-05-01T00:00:00Z', '2026-12-01T00:00:00Z');
    expect(activeEntry([upgrade, base], now)).toBe(upgrade);
    expect(activeEntry([base, upgrade], now)).toBe(upgrade);
  });

  it('takes the one listed last of active entries with the same since', () => {
    const first = entry('a', '2026-01-01T00:00:00Z', null);
    const second = entry('b', '2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z');
    expect(activeEntry([first, second], now)).toBe(second);
    expect(activeEntry([second, first], now)).toBe(first);
  });

  it('falls back to an older entry once a newer one ends', () => {
    const base = entry('base', '2026-01-01T00:00:00Z', null);
    const trial = entry('trial', '2026-05-01T00:00:00Z', '2026-05-15T00:00:00Z');
    expect(activeEntry([base, trial], now)).toBe(base);
  });
});
