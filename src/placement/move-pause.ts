import type { MoveWriteMarkers } from './move-write-markers.repository';

/** Pauses tried before a switch gives up for this run. */
const PAUSE_ATTEMPTS = 5;
/** How often a pausing move looks whether the writes under way are done. */
const DRAIN_POLL_MS = 20;
/** The part of MOVE_MAX_WRITE_PAUSE_MS kept back for the switch and for instances to notice it. */
const PAUSE_RESERVE = 0.2;

/** The steps of switching one thing (a collection, a feed) a move copies. */
export interface PausedSwitch {
  /** The marker target its writes announce themselves under. */
  target: string;
  /** Pauses its writes; false when it is gone (dropped meanwhile). */
  pause(): Promise<boolean>;
  /** Lets its writes go on again. */
  unpause(): Promise<void>;
  /** Copies what changed; false when the copy is not complete (a unique index refused some). */
  copy(): Promise<boolean>;
  /** Points it at the target, which ends the pause; false when it is gone. */
  switchOver(): Promise<boolean>;
}

/** A switch that could not be made within MOVE_MAX_WRITE_PAUSE_MS in PAUSE_ATTEMPTS tries. */
export class PauseTooLongError extends Error {
  constructor(readonly target: string) {
    super(`${target} could not be switched within MOVE_MAX_WRITE_PAUSE_MS`);
    this.name = 'PauseTooLongError';
  }
}

/**
 * Switches one thing a move copies, with its writes paused at most `maxPauseMs`: pause, wait
 * for the writes under way (their markers), copy one last time, switch. A pause that would last
 * longer is lifted without a switch, the writes go on, one more copy catches up, and it is tried
 * again. `holdLease` says whether this instance still holds the move with room for a pause.
 */
export async function switchWithPause(
  steps: PausedSwitch,
  markers: MoveWriteMarkers,
  maxPauseMs: number,
  holdLease: () => Promise<boolean>,
): Promise<'switched' | 'gone'> {
  for (let attempt = 0; attempt < PAUSE_ATTEMPTS; attempt += 1) {
    if (!(await holdLease())) throw new Error('the move’s lease ran out');
    const deadline = Date.now() + maxPauseMs * (1 - PAUSE_RESERVE);
    if (!(await steps.pause())) return 'gone';
    const drained = await drain(markers, steps.target, deadline);
    const complete = drained && (await steps.copy());
    if (complete && Date.now() < deadline) return (await steps.switchOver()) ? 'switched' : 'gone';
    await steps.unpause();
    await steps.copy();
  }
  throw new PauseTooLongError(steps.target);
}

/** Waits until no write to `target` is under way; false when the deadline came first. */
async function drain(
  markers: MoveWriteMarkers,
  target: string,
  deadline: number,
): Promise<boolean> {
  while (await markers.anyUnderWay(target)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
  }
  return true;
}
