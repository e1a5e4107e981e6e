import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

/**
 * V8 collects the short-lived Buffers of a stream (socket reads, BSON commands, GridFS chunk
 * copies) when its young generation fills, which those Buffers hardly do: they live outside the
 * heap, so several tens of MiB of them can wait for a collection while a large body streams. A
 * scavenge of the young generation (about a millisecond) frees them; streams that move many
 * bytes ask for one every so many bytes. `gc` is taken from a fresh context with the flag that
 * exposes it, so no command-line flag is needed.
 */
let collect: Collect | null = null;

function collector(): Collect {
  if (collect) return collect;
  setFlagsFromString('--expose-gc');
  collect = runInNewContext('gc') as Collect;
  return collect;
}

/** Collects the young generation now. */
export function collectYoungGarbage(): void {
  collector()({ type: 'minor' });
}

/**
 * Starts a full collection without waiting for it: V8 marks incrementally between tasks and
 * finishes it, and sets the old space's next limit from what it found live.
 */
export function startFullCollection(): void {
  collector()({ type: 'major', execution: 'async' });
}

/** Counts bytes streamed and collects the young generation after every `everyBytes` of them. */
export class GarbageCadence {
  private since = 0;

  constructor(private readonly everyBytes: number) {}

  passed(bytes: number): void {
    this.since += bytes;
    if (this.since < this.everyBytes) return;
    this.since = 0;
    collectYoungGarbage();
  }
}
