// The documents of the database rate-limit store (mongo-fixed-window.storage.ts): one per slot,
// named so that `_id` uniqueness decides the slots and one `_id` range holds a key's window.

/** One admitted request; nothing but its `_id` (see hitId). */
export interface RateLimitHit {
  _id: string;
}

export const RATE_LIMIT_COLLECTION = 'rate_limit_hits';

/** Digits of a window's start (epoch ms) and of a slot number in `_id`, so ids sort as numbers. */
const START_DIGITS = 15;
export const SLOT_DIGITS = 10;
/** The largest limit a slot number can count to. */
export const RATE_LIMIT_MAX_LIMIT = 10 ** SLOT_DIGITS;

/** `|` separates the parts of an id, so a key is written without it (and `%` escapes itself). */
function escapeKey(key: string): string {
  return key.replaceAll('%', '%25').replaceAll('|', '%7C');
}

export function windowPrefix(windowStart: number): string {
  return `${String(windowStart).padStart(START_DIGITS, '0')}|`;
}

/**
 * `_id` of the `slot`-th request admitted for `key` in the window starting at `windowStart`:
 * `<start, 15 digits>|<key>|<slot, 10 digits>`. The window comes first so that the sweep deletes
 * ended windows with one `_id` range; fixed widths make the highest slot of a key and window the
 * last id of its range.
 */
export function hitId(windowStart: number, key: string, slot: number): string {
  return `${windowPrefix(windowStart)}${escapeKey(key)}|${String(slot).padStart(SLOT_DIGITS, '0')}`;
}

/**
 * The `_id` range of exactly one key's slots in one window: ids that start with
 * `<start>|<key>|`. An escaped key has no `|`, so no other key's ids start so; `}` follows `|`.
 */
export function hitRange(windowStart: number, key: string): { from: string; to: string } {
  const base = `${windowPrefix(windowStart)}${escapeKey(key)}`;
  return { from: `${base}|`, to: `${base}}` };
}
