import { DUPLICATE, type Duplicate } from './duplicate';

/**
 * Numbered places ("slots") 0, 1, 2, … of which each can be taken once. Taking one is an insert
 * that the database refuses when the place is taken already: a document whose `_id` names the
 * slot (`<scope>|<n>`), or one under a unique index on (scope, slot). Both MongoDB and FerretDB
 * decide such inserts atomically, which neither does for a counter: FerretDB applies `$inc` and
 * filtered updates by reading, modifying and writing back, so concurrent ones are lost. Every
 * quota and counter that must hold across instances is therefore made of slots: the collection
 * quota, the index quota, the failed-authentication budget, the rate limit.
 */
export interface SlotSpace<T> {
  /**
   * The slot to try: every slot below it is believed taken — the number of slots when slots are
   * never given back, the lowest free one otherwise. `refused` is the slot whose insert was just
   * refused (null before the first attempt): a space may answer `refused + 1` from memory, or
   * look again to skip past the slots taken meanwhile. Answers below `refused + 1` are raised.
   */
  firstFree(refused: number | null): Promise<number>;
  /**
   * Inserts the claim of `slot`. DUPLICATE when the slot is taken (the search goes on); anything
   * else ends it and is returned — also an answer that is not a new claim, such as the entry a
   * concurrent request registered under the same name.
   */
  take(slot: number): Promise<T | Duplicate>;
}

/**
 * Takes the first free slot below `max` and returns what `take` answered for it; null when every
 * slot below `max` is taken. Each refused insert means that another claim took that slot, and
 * the next attempt is above it, so this ends after at most `max` inserts.
 */
export async function claimSlot<T>(space: SlotSpace<T>, max: number): Promise<T | null> {
  let refused: number | null = null;
  for (;;) {
    const floor = refused === null ? 0 : refused + 1;
    const slot = Math.max(floor, await space.firstFree(refused));
    if (slot >= max) return null;
    const result = await space.take(slot);
    if (result !== DUPLICATE) return result;
    refused = slot;
  }
}

/** The lowest slot not in `taken`: where a claim starts in a space whose slots are given back. */
export function lowestFree(taken: ReadonlySet<number>): number {
  let slot = 0;
  while (taken.has(slot)) slot += 1;
  return slot;
}

/**
 * Where a claim starts in a space whose slots are given back, under `max` that may be lower than
 * what is taken (a lowered limit): the lowest free slot below the bound b, the largest for which
 * b plus the slots taken at or above b is at most `max`; `max` (nothing fits) when there is none.
 * While every taken slot is below `max`, b is `max` and this is `lowestFree`. Above it, filling a
 * slot that a delete freed below `max` would let the count grow while it is over the limit; with
 * b, every claim lands below a bound that counts the slots above it in full, and since no claim
 * lands at or above the largest bound any claimer read, the slots in use stay at most `max` under
 * any concurrency (slots above b are only ever given back).
 */
export function firstFreeUnder(taken: ReadonlySet<number>, max: number): number {
  let bound = max;
  let above = [...taken].filter((slot) => slot >= bound).length;
  while (bound > 0 && bound + above > max) {
    bound -= 1;
    if (taken.has(bound)) above += 1;
  }
  const slot = lowestFree(taken);
  return slot < bound ? slot : max;
}
