import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { BackgroundRuns } from '../common/scheduling/background-runs';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { CollectionMover } from '../data';
import { MoveGivenUpError, TenantPlacements, type MoveProgress } from '../placement';
import { TenantFeedMove } from './tenant-feed-move';
import { TenantFilesMove } from './tenant-files-move';
import { TenantMoveRepository, type TenantMove } from './tenant-move.repository';
import type { MovedLocation } from './tenant-move.schema';

/** The tenant a running move names. */
function tenantOf(move: TenantMove): Tenant {
  if (move.target === undefined) throw new Error('a running move names its tenant');
  return { kind: move.kind, id: move.target };
}

/** Running moves one poll takes over at most. */
const TAKEOVER_BATCH = 10;

/** Thrown inside a run when this instance no longer holds the move: the new holder goes on. */
class LeaseLostError extends Error {
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
 * Runs tenant moves (TenantMoves starts them), in three phases:
 *
 * 1. announcing: the placement names the new cluster (new collections go there), the tenant's
 *    other collections are marked `moving`; once every instance can have dropped what it cached
 *    before (COLLECTION_DROP_GRACE_MS, which outlasts REGISTRY_CACHE_MS and the longest request),
 *    every instance reads the marked entries afresh and every write to them is marked;
 * 2. copying: CollectionMover moves one collection after the other, each with a brief pause of
 *    its writes (MOVE_MAX_WRITE_PAUSE_MS) before its switch; then the feed, then the files
 *    (TenantFilesMove: copied, their records pointed at the copies);
 * 3. retiring: once no instance can still read a source (COLLECTION_DROP_GRACE_MS after the last
 *    switch), the sources go, under tombstones, and the files' old bytes with them.
 *
 * A move always ends. Each collection and the feed get a bounded number of passes and pauses
 * (CollectionMover); besides, a move that has not made its switches by its deadline (moveBudgetMs
 * after it began announcing, from the tenant's items then), or that made no progress for
 * MOVE_STALL_MS, gives up: what it had not switched stays where it was — all of the tenant, its
 * placement included, when it had switched nothing — and it ends failed, saying why.
 *
 * The instance that starts a move runs it under a lease (MOVE_LEASE_MS) renewed as it goes; a
 * background task on every instance takes over a move whose lease ran out, claiming its next run
 * with an insert only one instance wins. Every step can run again after a crash.
 */
@Injectable()
export class TenantMoveRunner implements OnModuleDestroy {
  private readonly logger = new Logger('TenantMoves');
  private readonly leaseMs: number;
  private readonly maxPauseMs: number;
  private readonly graceMs: number;
  private readonly stallMs: number;
  private readonly budget: { graceMs: number; baseMs: number; per1000Ms: number };
  private readonly task: BackgroundTask;
  private readonly runs: BackgroundRuns;

  constructor(
    private readonly moves: TenantMoveRepository,
    private readonly mover: CollectionMover,
    private readonly placements: TenantPlacements,
    private readonly feed: TenantFeedMove,
    private readonly files: TenantFilesMove,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.leaseMs = config.clusters.moveLeaseMs;
    this.maxPauseMs = config.clusters.moveMaxWritePauseMs;
    this.graceMs = config.lifecycle.dropGraceMs;
    this.stallMs = config.clusters.moveStallMs;
    this.budget = {
      graceMs: this.graceMs,
      baseMs: config.clusters.moveBaseTimeMs,
      per1000Ms: config.clusters.moveTimePer1000ItemsMs,
    };
    this.task = tasks.register({
      name: 'tenant-moves',
      intervalMs: config.lifecycle.pollMs,
      run: () => this.takeOverAbandoned(),
    });
    this.runs = new BackgroundRuns(this.task, this.logger);
  }

  /** Stops the moves this instance runs between two steps; the lease runs out and they resume elsewhere. */
  async onModuleDestroy(): Promise<void> {
    await this.runs.stop();
  }

  /** When a lease taken now runs out. */
  leaseFrom(now: Date = new Date()): Date {
    return new Date(now.getTime() + this.leaseMs);
  }

  /** Runs the move in the background on this instance, which holds its lease. */
  continueInBackground(move: TenantMove): void {
    this.runs.start(() => this.run(move), 'tenant move interrupted', { move: move.id });
  }

  /**
   * Renews the lease while this instance still holds it; true when it does, with room for a
   * whole pause after the renewal (a pause started now cannot outlast it).
   */
  private async holdLease(move: TenantMove): Promise<boolean> {
    if (this.runs.stopping) return false;
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
  private checkBounds(move: TenantMove): void {
    const now = Date.now();
    if (move.deadlineAt !== undefined && now > move.deadlineAt.getTime()) {
      throw new MoveGivenUpError(
        `the move did not make its switches by its deadline ${move.deadlineAt.toISOString()} ` +
          `(${move.items ?? 0} items: COLLECTION_DROP_GRACE_MS + MOVE_BASE_TIME_MS + ` +
          'MOVE_TIME_PER_1000_ITEMS_MS per thousand items); the tenant stays where it was',
      );
    }
    const progressAt = (move.progressAt ?? move.startedAt).getTime();
    if (now - progressAt > this.stallMs) {
      throw new MoveGivenUpError(
        `the move made no progress since ${new Date(progressAt).toISOString()} ` +
          `(MOVE_STALL_MS ${this.stallMs})`,
      );
    }
  }

  /** What the copy of a collection or the feed reports to, and renews the lease through. */
  private progressOf(move: TenantMove): MoveProgress {
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
   * the move as long as it makes progress. Throws LeaseLostError when the lease ran out meanwhile.
   */
  private async report(move: TenantMove, pass: number, itemsLeft: number): Promise<void> {
    if (this.runs.stopping || Date.now() >= move.leaseUntil.getTime()) throw new LeaseLostError();
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

  private async renewOrStop(move: TenantMove): Promise<void> {
    if (!(await this.holdLease(move))) throw new LeaseLostError();
  }

  /** Waits until `time`, renewing the lease. */
  private async waitUntil(move: TenantMove, time: number): Promise<void> {
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
  private heartbeat(move: TenantMove): () => void {
    let beating = false;
    const timer = setInterval(() => {
      const now = Date.now();
      const stalled = now - (move.progressAt ?? move.startedAt).getTime() > this.stallMs;
      if (beating || stalled || this.runs.stopping || now >= move.leaseUntil.getTime()) return;
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

  private async run(move: TenantMove): Promise<void> {
    const stopBeating = this.heartbeat(move);
    try {
      if (move.phase === 'announcing') {
        try {
          await this.announce(move);
        } catch (error) {
          if (!(error instanceof MoveGivenUpError)) throw error;
          await this.giveUp(move, error, null);
          await this.toRetiring(move);
        }
      }
      if (move.phase === 'copying') await this.copy(move);
      if (move.phase === 'retiring') await this.retire(move);
    } catch (error) {
      if (error instanceof LeaseLostError) return;
      throw error;
    } finally {
      stopBeating();
    }
  }

  /**
   * Ends the move's copying as failed: the collections not switched stay where they are (`kept`,
   * the one under way, keeps its source), and so does the feed; when nothing was switched, the
   * placement names the source again, so that the tenant stays whole there.
   */
  private async giveUp(
    move: TenantMove,
    error: MoveGivenUpError,
    kept: MovedLocation | null,
  ): Promise<void> {
    const tenant = tenantOf(move);
    await this.mover.abandon(move.id);
    await this.feed.abandon(move, tenant);
    if (move.collectionsCopied === 0 && move.from !== null) {
      await this.placements.relocate(tenant, move.from);
    }
    await this.moves.fail(move.id, error.message, kept);
    move.error = error.message;
    this.logger.warn({ move: move.id, error: error.message }, 'tenant move given up');
  }

  private async toRetiring(move: TenantMove): Promise<void> {
    move.phase = 'retiring';
    move.switchedAt = new Date();
    await this.moves.update(move.id, { phase: 'retiring', switchedAt: move.switchedAt });
  }

  /** Places the tenant on the target and marks its collections, until no new one turns up. */
  private async announce(move: TenantMove): Promise<void> {
    const tenant = tenantOf(move);
    const to = await this.placements.relocate(tenant, move.cluster);
    await this.feed.announce(move, tenant);
    for (;;) {
      this.checkBounds(move);
      await this.renewOrStop(move);
      const marked = await this.mover.announce(tenant, move.id, to);
      await this.report(move, 0, 0);
      if (move.deadlineAt === undefined) await this.setDeadline(move);
      if (marked > 0 || move.announcedAt === undefined) {
        move.announcedAt = new Date();
        move.collections = move.collectionsCopied + (await this.mover.pending(move.id)).length;
        await this.moves.update(move.id, {
          announcedAt: move.announcedAt,
          collections: move.collections,
        });
      } else if (Date.now() >= move.announcedAt.getTime() + this.graceMs) {
        // A whole grace period passed since the last marks, and nothing new was created
        // elsewhere: every instance places the tenant's new collections on the target.
        break;
      }
      await this.waitUntil(move, move.announcedAt.getTime() + this.graceMs);
    }
    move.phase = 'copying';
    await this.moves.update(move.id, { phase: 'copying' });
  }

  /** The move's deadline, from the items its tenant holds now. */
  private async setDeadline(move: TenantMove): Promise<void> {
    let items = 0;
    for (const entry of await this.mover.pending(move.id)) {
      items += await this.mover.countItems(entry);
    }
    move.items = items;
    move.deadlineAt = new Date(Date.now() + moveBudgetMs(items, this.budget));
    await this.moves.update(move.id, { items, deadlineAt: move.deadlineAt });
  }

  private async copy(move: TenantMove): Promise<void> {
    await this.mover.resume(move.id);
    for (const entry of await this.mover.pending(move.id)) {
      await this.renewOrStop(move);
      const { physical, cluster, database } = entry;
      const placed = cluster !== undefined && database !== undefined;
      const source = this.mover.leavesSource(entry)
        ? { physical, ...(placed ? { cluster, database } : {}) }
        : null;
      if (source) {
        const sourceDatabase = placed ? { cluster, database } : null;
        await this.moves.addToRemove(move.id, 'sources', source, sourceDatabase, move.leaseUntil);
      }
      let outcome;
      try {
        outcome = await this.mover.move(entry, this.progressOf(move));
      } catch (error) {
        if (!(error instanceof MoveGivenUpError)) throw error;
        // Its writes never stopped for long enough, or the move ran past its bounds: the
        // collections not moved stay where they are, and the move ends failed once the moved
        // ones' sources are gone.
        await this.giveUp(move, error, source);
        if (source && entry.moving) {
          // What was copied of it goes at the end.
          const { cluster, database } = entry.moving;
          const copy = { physical: entry.physical, cluster, database };
          await this.moves.addToRemove(move.id, 'orphans', copy, null, move.leaseUntil);
        }
        break;
      }
      if (outcome.kind === 'gone' && source && entry.moving) {
        // Dropped while it was moved: what was copied goes too.
        const { cluster, database } = entry.moving;
        await this.moves.addToRemove(
          move.id,
          'orphans',
          { physical: entry.physical, cluster, database },
          null,
          move.leaseUntil,
        );
      }
      await this.moves.update(
        move.id,
        {},
        {
          itemsCopied: outcome.itemsCopied,
          ...(outcome.kind === 'switched' ? { collectionsCopied: 1 } : {}),
        },
      );
      if (outcome.kind === 'switched') move.collectionsCopied += 1;
    }
    if (move.error === undefined) {
      try {
        await this.feed.move(move, tenantOf(move), this.progressOf(move));
      } catch (error) {
        if (!(error instanceof MoveGivenUpError)) throw error;
        // The feed stays on its cluster; the collections' sources go all the same.
        await this.moves.fail(move.id, error.message, null);
        move.error = error.message;
      }
    }
    // Files move whether or not a collection failed, unless nothing was switched (the placement
    // names the source again): they go where the placement names.
    if (move.error === undefined || move.collectionsCopied > 0) {
      await this.files.move(move, tenantOf(move), () => this.renewOrStop(move));
    }
    await this.toRetiring(move);
  }

  private async retire(move: TenantMove): Promise<void> {
    await this.waitUntil(move, (move.switchedAt ?? new Date()).getTime() + this.graceMs);
    const current = await this.moves.findById(move.id);
    if (!current) return;
    // A failed move leaves some collections on their clusters: their databases stay.
    const failed = current.error !== undefined;
    await this.feed.retire(current, tenantOf(current));
    await this.mover.removeSources(
      current.sources,
      current.orphans,
      failed ? [] : current.sourceDatabases,
    );
    await this.files.retire(current, tenantOf(current));
    await this.moves.end(move.id, failed ? 'failed' : 'done', new Date());
    this.logger.log({ move: move.id, cluster: move.cluster }, 'tenant move done');
  }

  /** Takes over running moves whose holder let the lease run out (it died, or stopped). */
  private async takeOverAbandoned(): Promise<void> {
    const abandoned = await this.moves.findAbandoned(new Date(), TAKEOVER_BATCH);
    for (const move of abandoned) {
      if (this.runs.stopping) return;
      if (!(await this.moves.takeOver(move, this.leaseFrom()))) continue;
      this.logger.log({ move: move.id }, 'resuming a tenant move');
      this.continueInBackground(move);
    }
  }
}
