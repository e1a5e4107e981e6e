import type { FieldError } from '../errors';
import { parseRfc3339 } from './rfc3339';

/**
 * Keyset pagination shared by every list route: the `after[<field>]` / `before[<field>]` cursor
 * parameters, their tie-breaker (`after[<id field>]`), and the `Link` header of the next page.
 * A cursor with a tie-breaker is the pair (sort value, id) of the last item seen, so items that
 * share the sort value are neither skipped nor repeated.
 */

export type KeysetSide = 'after' | 'before';

/** A keyset position: the sort field's value and, optionally, the id that breaks ties. */
export interface KeysetCursor<V> {
  value: V;
  id?: string;
}

export type Parsed<T> = { value: T; error?: undefined } | { error: string };

/** How one resource reads its cursors. */
export interface KeysetRules<V> {
  /** The field the list is sorted by; undefined when the request's sort was not valid. */
  sortField: string | undefined;
  /** The resource's id field as it appears in JSON (`id`, `_id`): the tie-breaker. */
  idField: string;
  /** Fields the resource can sort by, for the error that names a wrong cursor field. */
  sortable?: readonly string[];
  /**
   * The sort field's cursor value; `inexact` when no stored value can equal it (a timestamp
   * finer than a millisecond), so that no tie can happen and the id is dropped.
   */
  parseValue(field: string, text: string, keepsGreater: boolean): Parsed<V> & { inexact?: boolean };
  parseId(text: string): Parsed<string>;
}

/** True when a side keeps values greater than its cursor: after in ascending, before in descending order. */
export function keepsGreater(side: KeysetSide, ascending: boolean): boolean {
  return (side === 'after') === ascending;
}

/**
 * A before[] cursor alone asks for the page right before it: the scan runs against the sort
 * order (and the page is reversed back), and the link it answers with is `rel="prev"`.
 */
export function walksBackwards(bounds: {
  after?: KeysetCursor<unknown>;
  before?: KeysetCursor<unknown>;
}): boolean {
  return bounds.before !== undefined && bounds.after === undefined;
}

/** Reads one side of the cursor from its `side[field]=text` parameters, adding to `errors`. */
export function readKeysetSide<V>(
  side: KeysetSide,
  raw: Record<string, string>,
  rules: KeysetRules<V>,
  ascending: boolean,
  errors: FieldError[],
): KeysetCursor<V> | undefined {
  const { sortField, idField } = rules;
  let value: V | undefined;
  let id: string | undefined;
  let inexact = false;
  for (const [field, text] of Object.entries(raw)) {
    const key = `${side}[${field}]`;
    if (field === sortField) {
      const parsed = rules.parseValue(field, text, keepsGreater(side, ascending));
      if (parsed.error !== undefined) errors.push({ field: key, message: parsed.error });
      else {
        value = parsed.value;
        inexact = parsed.inexact === true;
      }
    } else if (field === idField) {
      const parsed = rules.parseId(text);
      if (parsed.error !== undefined) errors.push({ field: key, message: parsed.error });
      else id = parsed.value;
    } else if (rules.sortable && !rules.sortable.includes(field)) {
      errors.push({
        field: key,
        message: `is not a cursor field; allowed: ${[...rules.sortable, idField].join(', ')}`,
      });
    } else if (sortField !== undefined) {
      errors.push({
        field: key,
        message: `must name the sort field (sort=${sortField}) or ${idField}; add sort=${field} to page by ${field}`,
      });
    } else {
      // The sort itself is invalid (reported by the caller): still report a bad value.
      const parsed = rules.parseValue(field, text, true);
      if (parsed.error !== undefined) errors.push({ field: key, message: parsed.error });
    }
  }
  if (value === undefined) {
    if (
      id !== undefined &&
      sortField !== undefined &&
      !errors.some((e) => e.field.startsWith(`${side}[`))
    ) {
      errors.push({
        field: `${side}[${idField}]`,
        message: `needs ${side}[${sortField}] too: the cursor is the pair (${sortField}, ${idField}) of the last item seen`,
      });
    }
    return undefined;
  }
  return id === undefined || inexact ? { value } : { value, id };
}

/**
 * An RFC 3339 cursor value, truncated to the millisecond (stored dates have millisecond
 * precision). A value with digits below the millisecond equals no stored value, so "> v" is
 * "> floor(v)" and "< v" is "< floor(v) + 1 ms", and the cursor is inexact.
 */
export function parseTimestampCursor(
  text: string,
  greater: boolean,
): Parsed<Date> & { inexact?: boolean } {
  const parsed = parseRfc3339(text);
  if (!parsed) return { error: 'must be an RFC 3339 timestamp, e.g. 2026-01-02T03:04:05.678Z' };
  if (!parsed.subMillisecond) return { value: parsed.date };
  return {
    value: greater ? parsed.date : new Date(parsed.date.getTime() + 1),
    inexact: true,
  };
}

/**
 * The `Link` header of the following page: the same path and query parameters with the cursor
 * of `side` replaced by `cursor`. Walking forwards it is `rel="next"`; walking backwards
 * (before[] alone) `rel="prev"`.
 */
export function keysetLink(
  path: string,
  rawQuery: Record<string, unknown>,
  side: KeysetSide,
  cursor: Record<string, string>,
): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(rawQuery)) {
    if (key.startsWith(`${side}[`)) continue;
    // A repeated parameter (`status[in]=a&status[in]=b`) is repeated in the link as well.
    for (const each of Array.isArray(value) ? value : [value])
      if (typeof each === 'string') params.append(key, each);
  }
  for (const [field, value] of Object.entries(cursor)) params.append(`${side}[${field}]`, value);
  return `<${path}?${params.toString()}>; rel="${side === 'before' ? 'prev' : 'next'}"`;
}
