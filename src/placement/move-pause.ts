import type { MoveWriteMarkers } from './move-write-markers.repository';

/**
 * Passes while writes go on, before the first pause: the first compares everything, each later
 * one copies only what changed since the one before (by the writes' change marker).
 */
export const CATCH_UP_PASSES = 3;
/**
 * How far before a pass's start a change marker (a date the writing instance's clock set) may
 * lie and still be of a change the pass did not see: instances' clocks agree within it. A change
 * missed anyway is copied by the last pass, which compares everything.
 */
export const CHANGE_MARKER_MARGIN_MS = 1_000;
/** Pauses tried before a switch gives up, and the move with it. */
export const PAUSE_ATTEMPTS = 3;
/** How often a pausing move looks whether the writes under way are done. */
const DRAIN_POLL_MS = 20;
/** The part of MOVE_MAX_WRITE_PAUSE_MS kept back for the switch and for instances to notice it. */
const PAUSE_RESERVE = 0.2;

/**
 * What a copy (a collection's, a feed's) tells the move it is part of: `holdLease` renews this
 * instance's hold and says whether it still has it with room for a whole pause (it throws
 * MoveGivenUpError once the move is past its deadline or stalled); `report` records progress —
 * the pass under way (1 on) and the items left to compare and copy in it.
 */
export interface MoveProgress {
  holdLease(): Promise<boolean>;
  report(pass: number, itemsLeft: number): Promise<void>;
}

/** The steps of switching one thing (a collection, a feed) a move copies. */
export interface PausedSwitch {
  /** The marker target its writes announce themselves under. */
  target: string;
  /** Pauses its writes; false when it is gone (dropped meanwhile). */
  pause(): Promise<boolean>;
  /** Lets its writes go on again. */
  unpause(): Promise<void>;
  /**
   * The last pass, with the writes paused: makes the target equal to the source (deletions
   * included); false when the copy is not complete (a unique index refused some).
   */
  copy(pass: number): Promise<boolean>;
  /** A catch-up pass after a pause was lifted: copies what changed since the last pass. */
  catchUp(pass: number): Promise<void>;
  /** Points it at the target, which ends the pause; false when it is gone. */
  switchOver(): Promise<boolean>;
}

/** The move gives up (its deadline passed, it stalled, a pause could not hold its last copy). */
export class MoveGivenUpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MoveGivenUpError';
  }
}

/** A switch that could not be made within MOVE_MAX_WRITE_PAUSE_MS in PAUSE_ATTEMPTS tries. */
export class PauseTooLongError extends MoveGivenUpError {
  constructor(
    readonly target: string,
    why: string,
  ) {
    super(
      `${target} could not be switched within MOVE_MAX_WRITE_PAUSE_MS in ${PAUSE_ATTEMPTS} pauses ` +
        `(the last: ${why}); it stays where it was`,
    );
    this.name = 'PauseTooLongError';
  }
}

/**
 * Switches one thing a move copies, with its writes paused at most `maxPauseMs`: pause, wait
 * for the writes under way (their markers), copy one last time, switch. A pause that would last
 * longer is lifted without a switch, the writes go on, one catch-up pass copies what changed,
 * and it is tried again, PAUSE_ATTEMPTS times at most; then PauseTooLongError, whatever the
 * difference left. `pass` is the number of the first pause's pass.
 */
export async function switchWithPause(
  steps: PausedSwitch,
  markers: MoveWriteMarkers,
  maxPauseMs: number,
  progress: MoveProgress,
  pass: number,
): Promise<'switched' | 'gone'> {
  let why = '';
  for (let attempt = 0; attempt < PAUSE_ATTEMPTS; attempt += 1) {
    if (!(await progress.holdLease())) throw new Error('the move’s lease ran out');
    const started = Date.now();
    const deadline = started + maxPauseMs * (1 - PAUSE_RESERVE);
    if (!(await steps.pause())) return 'gone';
    const drained = await drain(markers, steps.target, deadline);
    const complete = drained && (await steps.copy(pass));
    if (complete && Date.now() < deadline) return (await steps.switchOver()) ? 'switched' : 'gone';
    await steps.unpause();
    why = !drained
      ? `writes under way did not end within ${maxPauseMs} ms`
      : !complete
        ? 'a unique index refused part of the last copy'
        : `the last copy took ${Date.now() - started} ms of ${maxPauseMs}`;
    pass += 1;
    if (attempt + 1 < PAUSE_ATTEMPTS) {
      await steps.catchUp(pass);
      pass += 1;
    }
  }
  throw new PauseTooLongError(steps.target, why);
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
