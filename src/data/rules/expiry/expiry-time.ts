import type { Document } from 'mongodb';
import sift from 'sift';
import { TIMESTAMP_FIELDS } from '../../query/filter-operators';
import type { ExpiryRule } from '../collection-rules';

/**
 * When an item has expired, as one MongoDB filter — evaluated by the database (every read hides
 * expired items, the sweep selects them) and in memory with sift (an export's last check), so
 * there is one definition.
 *
 * An item has expired when its rule's field holds a time T and T + afterSeconds ≤ now. For
 * `_createdAt` and `_updatedAt` (BSON dates) that is a date comparison. Any other field is the
 * client's and stored as given, so a time there is a string, compared as the string it is:
 *
 * - It counts as a time when it is an RFC 3339 date-time in UTC:
 *   `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, with `t`/`z` in either case and `+00:00` / `-00:00` for
 *   `Z`; month 01–12, day 01–31, hour 00–23, minute and second 00–59, any number of fraction
 *   digits. It is compared with the cutoff exactly, to the last fraction digit.
 * - Anything else never expires: a time with another offset (`+02:00`), a number, null, a
 *   missing field, a malformed or leap-second string. A time with an offset is not converted,
 *   because the database compares stored strings character by character and its instant is not
 *   what its characters say; items that should expire store their times in UTC.
 * - Its parts are compared in order (year, month, …, fraction), which is the time's order for
 *   every real date; a day the month does not have (`02-30`) sorts after that month's last day.
 *
 * A field path through an array follows MongoDB: the item has expired when any value the path
 * reaches is such a time at or before the cutoff.
 */

/** The instant (ms) at or before which an item's time has expired at `now`. */
export function cutoffOf(rule: Pick<ExpiryRule, 'afterSeconds'>, now: number): number {
  return now - rule.afterSeconds * 1000;
}

/** The items that have expired at `now` under `rule`. */
export function expiredFilter(rule: Pick<ExpiryRule, 'field' | 'afterSeconds'>, now: number) {
  const cutoff = cutoffOf(rule, now);
  if (TIMESTAMP_FIELDS.has(rule.field)) return { [rule.field]: { $lte: new Date(cutoff) } };
  return { [rule.field]: { $regex: utcTimeAtOrBefore(cutoff) } };
}

/** The items that have not expired at `now` under `rule`. */
export function liveFilter(rule: Pick<ExpiryRule, 'field' | 'afterSeconds'>, now: number) {
  return { $nor: [expiredFilter(rule, now)] };
}

/** Whether an item read from the database has expired at `now` (the same filter, in memory). */
export function hasExpired(
  rule: Pick<ExpiryRule, 'field' | 'afterSeconds'>,
  item: Document,
  now: number,
): boolean {
  return sift(expiredFilter(rule, now) as never)(item);
}

/** The parts of a time: [low, high] of each two-digit (the year: four-digit) number. */
const PARTS: readonly { min: number; max: number; width: number }[] = [
  { min: 0, max: 9999, width: 4 },
  { min: 1, max: 12, width: 2 },
  { min: 1, max: 31, width: 2 },
  { min: 0, max: 23, width: 2 },
  { min: 0, max: 59, width: 2 },
  { min: 0, max: 59, width: 2 },
];
/** What precedes each part. */
const SEPARATORS = ['', '-', '-', '[Tt]', ':', ':'];
const UTC = '(?:[Zz]|[+-]00:00)';
/** Matches nothing (a cutoff before the year 0000). */
const NOTHING = '[^\\s\\S]';

/**
 * The pattern of the UTC times (as described above) at or before `cutoff` (ms): an alternation
 * over the first part that is smaller than the cutoff's, the parts before it equal; or all
 * parts equal and a fraction not above the cutoff's milliseconds. Uses only what both MongoDB's
 * and FerretDB's (Go) regular expressions read alike.
 */
export function utcTimeAtOrBefore(cutoff: number): string {
  const date = new Date(cutoff);
  const year = date.getUTCFullYear();
  if (year < 0) return NOTHING;
  const anyParts = PARTS.map((part) =>
    digitRange(pad(part.min, part.width), pad(part.max, part.width)),
  );
  if (year > 9999) return `^${timeOf(anyParts)}(?:\\.[0-9]+)?${UTC}$`;
  const values = [
    year,
    date.getUTCMonth() + 1,
    date.getUTCDate(),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
  ];
  const exact = values.map((value, i) => pad(value, PARTS[i]?.width ?? 2));
  const branches: string[] = [];
  PARTS.forEach((part, k) => {
    const value = values[k] ?? 0;
    if (value <= part.min) return;
    const smaller = digitRange(pad(part.min, part.width), pad(value - 1, part.width));
    branches.push(
      `${timeOf([...exact.slice(0, k), smaller, ...anyParts.slice(k + 1)])}(?:\\.[0-9]+)?`,
    );
  });
  branches.push(`${timeOf(exact)}${fractionAtMost(pad(date.getUTCMilliseconds(), 3))}`);
  return `^(?:${branches.join('|')})${UTC}$`;
}

function timeOf(parts: readonly string[]): string {
  return parts.map((part, i) => `${SEPARATORS[i] ?? ''}${part}`).join('');
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** An optional fraction `.ddd…` whose value is at most `0.<ms>` (ms: three digits). */
function fractionAtMost(ms: string): string {
  // From the last digit outwards: at digit i, a smaller digit then anything, or the same digit
  // then what follows (the fraction may end there); after the third, only zeros.
  let tail = '0*';
  for (let i = ms.length - 1; i >= 0; i -= 1) {
    const digit = Number(ms[i]);
    const options = [`${digit}(?:${tail})`];
    if (digit > 0) options.unshift(`[0-${digit - 1}][0-9]*`);
    tail = i === 0 ? options.join('|') : `|${options.join('|')}`;
  }
  return `(?:\\.(?:${tail}))?`;
}

/** A pattern matching exactly the digit strings of this width from `low` to `high`. */
export function digitRange(low: string, high: string): string {
  if (low.length === 0) return '';
  const [l, h] = [Number(low[0]), Number(high[0])];
  const [lowRest, highRest] = [low.slice(1), high.slice(1)];
  if (l === h) return `${l}${digitRange(lowRest, highRest)}`;
  const nines = '9'.repeat(lowRest.length);
  const zeros = '0'.repeat(lowRest.length);
  if (lowRest === zeros && highRest === nines) return `[${l}-${h}]${anyDigits(lowRest.length)}`;
  const options = [`${l}${digitRange(lowRest, nines)}`];
  if (h - l > 1) options.push(`[${l + 1}-${h - 1}]${anyDigits(lowRest.length)}`);
  options.push(`${h}${digitRange(zeros, highRest)}`);
  return `(?:${options.join('|')})`;
}

function anyDigits(count: number): string {
  return count === 0 ? '' : count === 1 ? '[0-9]' : `[0-9]{${count}}`;
}
