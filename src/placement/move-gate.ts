import type { MoveWriteMarkers } from './move-write-markers.repository';

/**
 * A write that passed a MoveGate: its marker (null when what it writes is not being moved) and,
 * when it has one, the state it read afresh once the marker was written (`now`): the state the
 * write goes on with.
 */
export type MovePassage<N> = { marker: null } | { marker: string; now: N };

/**
 * The write side of a tenant move (docs/deployment.md, "Moving tenants"), once for everything a
 * move copies while writes go on: a tenant's collections (CollectionWriteGate) and what it keeps
 * in its cluster database (TenantContentGate). A write `pass`es (or `enter`s) before it writes
 * anything and `leave`s when it is done or failed:
 *
 * 1. The state of what it writes, as the write has it (`movingTarget`, cached): not being moved →
 *    it goes on, at no further cost.
 * 2. Being moved → it marks itself under way under the target's marker name (MoveWriteMarkers):
 *    from then on the move cannot pause, compare or switch what it writes until the marker is gone.
 * 3. It reads the state afresh (`readNow`), after its marker is written: paused (`pausedIn`) → its
 *    marker goes and it is refused (`refusal`, a 503 with Retry-After), before anything is
 *    written; otherwise it goes on where the content is now (the passage's `now`). A fresh read
 *    that fails removes the marker too.
 *
 * A move pauses first and then waits for the markers, so a write either saw the pause or holds a
 * marker the move waits for: none writes to a source that is being compared or switched.
 * Subclasses say only what differs: how the state is read, and which error refuses.
 */
export abstract class MoveGate<K, N = unknown> {
  protected constructor(private readonly markers: MoveWriteMarkers) {}

  /** The marker target of a write to `key` when it is being moved, as cached; null otherwise. */
  protected abstract movingTarget(key: K): string | null | Promise<string | null>;

  /** The state of `key`, read afresh. */
  protected abstract readNow(key: K): Promise<N>;

  /** Whether writes are paused in the state `now` (read afresh). */
  protected abstract pausedIn(now: N): boolean;

  /** The answer to a write to `key` while its writes are paused. */
  protected abstract refusal(key: K): Error;

  /**
   * Passes the gate for a write to `key`: its marker when `key` is being moved, with the state
   * read afresh after it; refuses while paused.
   */
  async pass(key: K): Promise<MovePassage<N>> {
    const target = await this.movingTarget(key);
    if (target === null) return { marker: null };
    const marker = await this.markers.begin(target);
    let now: N;
    try {
      now = await this.readNow(key);
    } catch (error) {
      // Left in place, this instance would renew the marker for as long as it runs, and every
      // pause of the move would wait for a write that never ends.
      await this.leave(marker);
      throw error;
    }
    if (this.pausedIn(now)) {
      await this.markers.end(marker);
      throw this.refusal(key);
    }
    return { marker, now };
  }

  /** The marker of this write when `key` is being moved; null otherwise. Refuses while paused. */
  async enter(key: K): Promise<string | null> {
    return (await this.pass(key)).marker;
  }

  /** The write that `enter` answered `marker` is done (or failed). */
  async leave(marker: string | null): Promise<void> {
    if (marker !== null) await this.markers.end(marker).catch(() => undefined);
  }

  /** Runs `write` through the gate, with its passage: between `pass` and `leave`. */
  async through<T>(key: K, write: (passage: MovePassage<N>) => Promise<T>): Promise<T> {
    const passage = await this.pass(key);
    try {
      return await write(passage);
    } finally {
      await this.leave(passage.marker);
    }
  }
}
