import type { FallbackWriteQueue } from '../../common/mongo/fallback-database';

/** Reads of an item that a concurrent write keeps moving before a change computed from it gives up. */
export const MODIFY_ROUNDS = 3;

/** Writes of one item are queued in-process under this key (collection namespace + id). */
export function writeKey(physical: string, id: string): string {
  return JSON.stringify([physical, id]);
}

/**
 * Runs `task` holding the queue of every one of the items (a multi-item write that must check
 * them all before writing any). The keys are taken in one order, and every other writer holds
 * one key at a time, so two such writes cannot wait for each other.
 */
export function holdingItems<T>(
  queue: FallbackWriteQueue,
  physical: string,
  ids: readonly string[],
  task: () => Promise<T>,
): Promise<T> {
  const keys = [...new Set(ids.map((id) => writeKey(physical, id)))].sort();
  const hold = (index: number): Promise<T> =>
    index === keys.length ? task() : queue.run(keys[index] as string, () => hold(index + 1));
  return hold(0);
}
