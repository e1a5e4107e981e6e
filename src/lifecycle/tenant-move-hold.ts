import type { AppConfig } from '../config';
import { MoveGivenUpError, type MoveProgress } from '../placement';
import type { TenantMoveRepository, TenantMove } from './tenant-move.repository';

/** Thrown inside a run when this instance no longer holds the move: the new holder goes on. */
export class LeaseLostError extends Error {
  constructor() {
    super('the move’s lease ran out; another instance takes it over');
  }
}

/** The time a move may take to its switches (docs/deployment.md, "How long a move takes"). */
export function moveBudgetMs(
  items: number,
  config: { graceMs: number; baseMs: number; per1000Ms: number },
): number {
  return config.graceMs + config.baseMs + Math.ceil(items / 1000) * config.per1000Ms;
}

/**
 * An instance's hold on the move it runs (TenantMoveRunner): its lease (MOVE_LEASE_MS), renewed
 * by a heartbeat and by every step and batch; its progress (`pass`, `itemsLeft`, `progressAt`);
 * and its bounds — past its deadline, or without progress for MOVE_STALL_MS, it gives up
 * (MoveGivenUpError).
 */
export class MoveHold {
  private readonly leaseMs: number;
  private readonly maxPauseMs: number;
  private readonly stallMs: number;
  private readonly budget: { graceMs: number; baseMs: number; per1000Ms: number };

  constructor(
    private readonly moves: TenantMoveRepository,
    config: AppConfig,
    private readonly stopping: () => boolean,
  ) {
    this.leaseMs = config.clusters.moveLeaseMs;
    this.maxPauseMs = config.clusters.moveMaxWritePauseMs;
    this.stallMs = config.clusters.moveStallMs;
    this.budget = {
      graceMs: config.lifecycle.dropGraceMs,
      baseMs: config.clusters.moveBaseTimeMs,
      per1000Ms: config.clusters.moveTimePer1000ItemsMs,
    };
  }

  /** When a lease taken now runs out. */
  leaseFrom(now: Date = new Date()): Date {
    return new Date(now.getTime() + this.leaseMs);
  }

  /** The deadline of a move of a tenant of `items` that begins now. */
  deadlineFor(items: number): Date {
    return new Date(Date.now() + moveBudgetMs(items, this.budget));
  }

  /**
   * Renews the lease while this instance still holds it; true when it does, with room for a
   * whole pause after the renewal (a pause started now cannot outlast it).
   */
  async holdLease(move: TenantMove): Promise<boolean> {
    if (this.stopping()) return false;
    // Run out (this instance stalled): another instance may hold the move now.
    if (Date.now() >= move.leaseUntil.getTime()) return false;
    // A step begins (or goes on): progress.
    const now = new Date();
    const renewed = this.leaseFrom(now);
    await this.moves.update(move.id, { leaseUntil: renewed, progressAt: now });
    move.leaseUntil = renewed;
    move.progressAt = now;
    // The renewal took so long that a pause started now could outlast it.
    return Date.now() + this.maxPauseMs < renewed.getTime();
  }

  /** Gives up a move past its deadline, or without progress for MOVE_STALL_MS. */
  checkBounds(move: TenantMove): void {
    this.checkDeadline(move);
    const now = Date.now();
    const progressAt = (move.progressAt ?? move.startedAt).getTime();
    if (now - progressAt > this.stallMs) {
      throw new MoveGivenUpError(
        `the move made no progress since ${new Date(progressAt).toISOString()} ` +
          `(MOVE_STALL_MS ${this.stallMs})`,
      );
    }
  }

  /** Gives up a move past its deadline. */
  private checkDeadline(move: TenantMove): void {
    if (move.deadlineAt !== undefined && Date.now() > move.deadlineAt.getTime()) {
      throw new MoveGivenUpError(
        `the move did not make its switches by its deadline ${move.deadlineAt.toISOString()} ` +
          `(${move.items ?? 0} items: COLLECTION_DROP_GRACE_MS + MOVE_BASE_TIME_MS + ` +
          'MOVE_TIME_PER_1000_ITEMS_MS per thousand items); the tenant stays where it was',
      );
    }
  }

  /** What the copy of a collection or the feed reports to, and renews the lease through. */
  progressOf(move: TenantMove): MoveProgress {
    return {
      holdLease: async () => {
        this.checkBounds(move);
        return this.holdLease(move);
      },
      report: (pass, itemsLeft) => this.report(move, pass, itemsLeft),
    };
  }

  /**
   * Records progress and renews the lease with it: a long pass (a large collection's first) holds
   * the move as long as it makes progress. Throws LeaseLostError when the lease ran out meanwhile,
   * and MoveGivenUpError past the deadline: a pass gives up at its next batch, not at its end.
   */
  async report(move: TenantMove, pass: number, itemsLeft: number): Promise<void> {
    if (this.stopping() || Date.now() >= move.leaseUntil.getTime()) throw new LeaseLostError();
    this.checkDeadline(move);
    move.pass = pass;
    move.itemsLeft = itemsLeft;
    move.progressAt = new Date();
    move.leaseUntil = this.leaseFrom(move.progressAt);
    await this.moves.update(move.id, {
      pass,
      itemsLeft,
      progressAt: move.progressAt,
      leaseUntil: move.leaseUntil,
    });
  }

  async renewOrStop(move: TenantMove): Promise<void> {
    if (!(await this.holdLease(move))) throw new LeaseLostError();
  }

  /** Waits until `time`, renewing the lease. */
  async waitUntil(move: TenantMove, time: number): Promise<void> {
    for (;;) {
      await this.renewOrStop(move);
      const left = time - Date.now();
      if (left <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, this.leaseMs / 4)));
    }
  }

  /**
   * Renews the lease while this instance is alive, between steps and during long ones alike (a
   * large collection's first pass can outlast MOVE_LEASE_MS): only a holder that died, froze or
   * lost the database lets it run out. One stuck in a step (no progress for MOVE_STALL_MS) is no
   * longer renewed: another instance takes the move over and fails it (checkBounds).
   */
  heartbeat(move: TenantMove): () => void {
    let beating = false;
    const timer = setInterval(() => {
      const now = Date.now();
      const stalled = now - (move.progressAt ?? move.startedAt).getTime() > this.stallMs;
      if (beating || stalled || this.stopping() || now >= move.leaseUntil.getTime()) return;
      beating = true;
      const renewed = this.leaseFrom();
      this.moves
        .renewLease(move.id, move.runs, renewed)
        .then((held) => {
          if (held && renewed > move.leaseUntil) move.leaseUntil = renewed;
        })
        .catch(() => undefined)
        .finally(() => (beating = false));
    }, this.leaseMs / 4);
    return () => clearInterval(timer);
  }
}
