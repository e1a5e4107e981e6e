import { lowestFree } from '../../../common/mongo/slots';

/**
 * A place a collection's item quota gives out: slot `slot` of the collection, held by the item
 * `itemId` (stored, or being created since `claimedAt`).
 */
export interface HeldPlace {
  slot: number;
  itemId: string;
  claimedAt: Date;
}

/**
 * A place whose item does not exist is taken back after this long: its create died between the
 * place and the item's insert, or its item went by a path that did not give it back. A create
 * gives up (503) when it reaches half of it before its insert, so the other half is the margin
 * for clocks of instances that differ (as a uniqueField claim's grace).
 */
export const PLACE_GRACE_MS = 60_000;

/**
 * The slot a create tries next, given the places of its collection as last read: the lowest free
 * one while fewer than `max` are held, else `max` (none fits). Held places are counted, not only
 * their numbers: a limit lowered below the places held (a downgrade) leaves free numbers below
 * `max` while the collection holds `max` items or more, and none of them may be given out.
 */
export function nextPlace(held: readonly HeldPlace[], max: number): number {
  if (held.length >= max) return max;
  return lowestFree(new Set(held.map((place) => place.slot)));
}

/** Whether any place is held at or above `max`: the limit was lowered below what is held. */
export function heldAbove(held: readonly HeldPlace[], max: number): boolean {
  return held.some((place) => place.slot >= max);
}

/**
 * The places that hold nothing any more, among those older than PLACE_GRACE_MS (a younger
 * place may belong to a create under way): a place whose item does not exist, and every place
 * of an item but its lowest (an item placed twice by two concurrent adoptions). `existing` are
 * the ids of the places' items that are stored.
 */
export function surplusPlaces(
  held: readonly HeldPlace[],
  existing: ReadonlySet<string>,
  now: number,
): HeldPlace[] {
  const lowest = new Map<string, number>();
  for (const place of held) {
    const seen = lowest.get(place.itemId);
    if (seen === undefined || place.slot < seen) lowest.set(place.itemId, place.slot);
  }
  return held.filter(
    (place) =>
      now - place.claimedAt.getTime() >= PLACE_GRACE_MS &&
      (!existing.has(place.itemId) || lowest.get(place.itemId) !== place.slot),
  );
}
