import { isPlainObject } from '../../../common/json';

/**
 * The item as a `$set` of `values` leaves it: each key a field or a dotted path (field names
 * hold no dot), objects on the way copied, the stored item untouched. A path through something
 * other than an object is left to the database to refuse.
 */
export function afterSet(
  item: Record<string, unknown>,
  values: Record<string, unknown>,
): Record<string, unknown> {
  const after: Record<string, unknown> = { ...item };
  for (const [path, value] of Object.entries(values)) {
    const segments = path.split('.');
    const last = segments.pop() as string;
    let node = after;
    for (const segment of segments) {
      const next = node[segment];
      const copy = isPlainObject(next) ? { ...next } : {};
      node[segment] = copy;
      node = copy;
    }
    node[last] = value;
  }
  return after;
}
