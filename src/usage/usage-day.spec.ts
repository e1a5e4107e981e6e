import { ValidationFailedError } from '../common/errors';
import { addDays, daysBetween, MAX_RANGE_DAYS, parseDayRange, utcDay } from './usage-day';

const NOW = Date.parse('2026-03-15T22:30:00-05:00'); // 2026-03-16 in UTC

function fieldOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationFailedError) return error.errors?.[0]?.field;
    throw error;
  }
  return undefined;
}

describe('usage days', () => {
  it('names the UTC day of an instant', () => {
    expect(utcDay(NOW)).toBe('2026-03-16');
    expect(utcDay(Date.parse('2026-03-16T00:00:00Z') - 1)).toBe('2026-03-15');
  });

  it('adds days across months and leap days', () => {
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(daysBetween('2026-12-30', '2027-01-02')).toEqual([
      '2026-12-30',
      '2026-12-31',
      '2027-01-01',
      '2027-01-02',
    ]);
  });

  it('defaults to the 31 days to today (UTC)', () => {
    expect(parseDayRange({}, NOW)).toEqual({ from: '2026-02-14', to: '2026-03-16' });
    expect(parseDayRange({ to: '2026-01-31' }, NOW)).toEqual({
      from: '2026-01-01',
      to: '2026-01-31',
    });
  });

  it('takes a one-day range and the longest one', () => {
    expect(parseDayRange({ from: '2026-01-05', to: '2026-01-05' }, NOW)).toEqual({
      from: '2026-01-05',
      to: '2026-01-05',
    });
    const to = addDays('2025-01-01', MAX_RANGE_DAYS - 1);
    expect(parseDayRange({ from: '2025-01-01', to }, NOW)).toEqual({ from: '2025-01-01', to });
  });

  it('refuses a day that is malformed or does not exist, naming the parameter', () => {
    expect(fieldOf(() => parseDayRange({ from: '2026-1-05' }, NOW))).toBe('from');
    expect(fieldOf(() => parseDayRange({ to: '2026-02-30' }, NOW))).toBe('to');
    expect(fieldOf(() => parseDayRange({ to: '2026-13-01' }, NOW))).toBe('to');
    expect(fieldOf(() => parseDayRange({ from: ['2026-01-01'] }, NOW))).toBe('from');
  });

  it('refuses from after to, and a range over the longest', () => {
    expect(fieldOf(() => parseDayRange({ from: '2026-01-06', to: '2026-01-05' }, NOW))).toBe(
      'from',
    );
    const to = addDays('2025-01-01', MAX_RANGE_DAYS);
    expect(fieldOf(() => parseDayRange({ from: '2025-01-01', to }, NOW))).toBe('to');
  });
});
