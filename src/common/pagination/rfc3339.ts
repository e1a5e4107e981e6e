const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+ -])(\d{2}):(\d{2}))$/;

/** An RFC 3339 timestamp, split into the millisecond instant and whether digits below a millisecond were set. */
export interface ParsedTimestamp {
  /** The instant, truncated to the millisecond (MongoDB's date precision). */
  date: Date;
  /** True when the value had non-zero digits below the millisecond. */
  subMillisecond: boolean;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Parses an RFC 3339 date-time (`2026-01-02T03:04:05.678Z`, `...+02:00`); null when it is not
 * one. Stricter than Date.parse, which also accepts `2026-02-30` or `Jan 2 2026`. Leap seconds
 * (`:60`) are rejected: JavaScript dates cannot represent them. A space in place of the offset's
 * `+` is read as `+`: it is what an unencoded `+` in a query string decodes to.
 */
export function parseRfc3339(value: string): ParsedTimestamp | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7] ?? '';
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (m[8] === undefined) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  const date = new Date(utc.getTime() - offsetMinutes * 60_000);
  if (Number.isNaN(date.getTime())) return null;
  return { date, subMillisecond: /[1-9]/.test(fraction.slice(3)) };
}
