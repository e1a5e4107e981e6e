import { setFlagsFromString } from 'node:v8';
import { startFullCollection } from './garbage-collection';

/**
 * How far V8 lets the heap grow past what was live after a full collection, while a long stream
 * runs. An import's items wait tens of milliseconds for their batch's round trips, long enough to
 * be promoted, and an export's pages likewise; under V8's own factor (up to 4× on a small heap)
 * that garbage piles up in the old space: an import of 100,000 items grew the process by 80 MiB
 * of it. A bound of 20 % over a heap of about 45 MiB keeps that under 10 MiB, for a full
 * collection (10–40 ms, mostly incremental) every few seconds while the stream runs.
 *
 * The bound holds only while such a stream runs. Held all the time, it made ordinary requests
 * pay too: their promoted garbage reached 20 % in about half a second, and full collections
 * were the largest part of what a GET by `_id` cost over the framework floor (docs/benchmarks.md,
 * "Heap bound only while a stream runs").
 *
 * V8's flag belongs to the process, so there is one bound per process: the first holder sets it
 * and starts a full collection, so that the next limit is computed under it at once rather than
 * after the old space has reached the one V8 set before; the last holder's release leaves the
 * factor to V8 again (from the full collection after that on).
 */
export class HeapGrowthBound {
  private percent = 0;
  private holders = 0;

  constructor(
    private readonly setGrowingPercent: (percent: number) => void = (percent) =>
      setFlagsFromString(`--heap-growing-percent=${percent}`),
    private readonly startCollection: () => void = startFullCollection,
  ) {}

  /** `percent` over the live size while held; 0 never bounds (HEAP_GROWTH_PERCENT). */
  configure(percent: number): void {
    this.percent = percent;
  }

  /** Bounds the heap's growth until the returned function is called (once is enough). */
  hold(): () => void {
    if (this.percent <= 0) return () => undefined;
    if (this.holders++ === 0) {
      this.setGrowingPercent(this.percent);
      this.startCollection();
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.holders === 0) this.setGrowingPercent(0);
    };
  }
}

/** The process's bound (V8's flag is the process's). */
export const heapGrowthBound = new HeapGrowthBound();
