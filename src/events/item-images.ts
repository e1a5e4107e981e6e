import { isDeepStrictEqual } from 'node:util';

/**
 * What an item event stores of the item as it was before the change, so that a live query can
 * tell whether the item matched its filter before (docs/events.md, "Live queries"): for an
 * update, the earlier values of the top-level fields the change touched (`fields`) and the
 * fields the item did not have (`missing`); for a deletion, the whole item. The item after the
 * change is the event's `data`, so the earlier image is `data` with these fields put back.
 */
export interface ItemPrior {
  fields: Record<string, unknown>;
  missing?: string[];
}

/**
 * The prior of a change from `before` to `after` (items as JSON): undefined for a creation,
 * the whole item for a deletion, the top-level fields that differ for an update.
 */
export function priorOf(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): ItemPrior | undefined {
  if (before === null) return undefined;
  if (after === null) return { fields: before };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(before))
    if (!Object.hasOwn(after, key) || !isDeepStrictEqual(value, after[key])) fields[key] = value;
  const missing = Object.keys(after).filter((key) => !Object.hasOwn(before, key));
  return missing.length > 0 ? { fields, missing } : { fields };
}

/** The item as it was before an update (`after`: the event's data) or a deletion (`after` null). */
export function imageBefore(
  after: Record<string, unknown> | null,
  prior: ItemPrior,
): Record<string, unknown> {
  if (after === null) return prior.fields;
  const image: Record<string, unknown> = { ...after };
  for (const key of prior.missing ?? []) delete image[key];
  return Object.assign(image, prior.fields);
}
