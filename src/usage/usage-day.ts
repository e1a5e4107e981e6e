import { ValidationFailedError } from '../common/errors';

/** A UTC day in milliseconds (UTC knows no leap seconds). */
export const DAY_MS = 86_400_000;
const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** The longest range one usage request may ask for, in days (both ends included). */
export const MAX_RANGE_DAYS = 366;

/** The range a request without `from` covers, in days ending with `to` (both included). */
export const DEFAULT_RANGE_DAYS = 31;

/** The UTC day of an instant, as `YYYY-MM-DD`: the bucket usage is counted in. */
export function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The day `days` after `day` (before, when negative). */
export function addDays(day: string, days: number): string {
  return utcDay(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS);
}

/** Every day from `from` to `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

function isRealDay(value: string): boolean {
  // Date.parse accepts 2026-02-30 and rolls it over; the day must read back unchanged.
  return DAY_PATTERN.test(value) && utcDay(Date.parse(`${value}T00:00:00Z`) || 0) === value;
}

export interface DayRange {
  from: string;
  to: string;
}

/**
 * The days a usage request asks for: `from` and `to` are UTC days (YYYY-MM-DD), both included;
 * `to` defaults to today, `from` to DEFAULT_RANGE_DAYS days ending with `to`. A malformed day,
 * `from` after `to`, or more than MAX_RANGE_DAYS days is a 400 naming the parameter.
 */
export function parseDayRange(raw: { from?: unknown; to?: unknown }, now: number): DayRange {
  const read = (field: 'from' | 'to'): string | undefined => {
    const value = raw[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !isRealDay(value))
      throw new ValidationFailedError([{ field, message: 'must be a UTC day written YYYY-MM-DD' }]);
    return value;
  };
  const to = read('to') ?? utcDay(now);
  const from = read('from') ?? addDays(to, 1 - DEFAULT_RANGE_DAYS);
  if (from > to)
    throw new ValidationFailedError([{ field: 'from', message: 'must not be after to' }]);
  if (addDays(from, MAX_RANGE_DAYS - 1) < to)
    throw new ValidationFailedError([
      { field: 'to', message: `must be at most ${MAX_RANGE_DAYS} days after from (both included)` },
    ]);
  return { from, to };
}
