import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { BackgroundRuns } from '../common/scheduling/background-runs';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { CollectionMover } from '../data';
import { MoveGivenUpError, TenantPlacements } from '../placement';
import { TenantFeedMove } from './tenant-feed-move';
import { TenantFilesMove } from './tenant-files-move';
import { LeaseLostError, MoveHold } from './tenant-move-hold';
import { TenantMoveRepository, type TenantMove } from './tenant-move.repository';
import type { MovedLocation } from './tenant-move.schema';

/** The tenant a running move names. */
function tenantOf(move: TenantMove): Tenant {
  if (move.target === undefined) throw new Error('a running move names its tenant');
  return { kind: move.kind, id: move.target };
}

/** Running moves one poll takes over at most. */
const TAKEOVER_BATCH = 10;

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
  private readonly graceMs: number;
  private readonly hold: MoveHold;
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
    this.graceMs = config.lifecycle.dropGraceMs;
    this.hold = new MoveHold(moves, config, () => this.runs.stopping);
    this.task = tasks.register({
      name: 'tenant-moves',
      intervalMs: config.lifecycle.pollMs,
      // Backs off only while no move runs; one that starts is seen within its first lease, so
      // one abandoned is still taken over within MOVE_LEASE_MS plus LIFECYCLE_POLL_MS.
      idleBackoff: { maxMs: config.clusters.moveLeaseMs },
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
    return this.hold.leaseFrom(now);
  }

  /** Runs the move in the background on this instance, which holds its lease. */
  continueInBackground(move: TenantMove): void {
    this.runs.start(() => this.run(move), 'tenant move interrupted', { move: move.id });
  }

  private async run(move: TenantMove): Promise<void> {
    const stopBeating = this.hold.heartbeat(move);
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
      this.hold.checkBounds(move);
      await this.hold.renewOrStop(move);
      const marked = await this.mover.announce(tenant, move.id, to);
      await this.hold.report(move, 0, 0);
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
      await this.hold.waitUntil(move, move.announcedAt.getTime() + this.graceMs);
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
    move.deadlineAt = this.hold.deadlineFor(items);
    await this.moves.update(move.id, { items, deadlineAt: move.deadlineAt });
  }

  private async copy(move: TenantMove): Promise<void> {
    await this.mover.resume(move.id);
    for (const entry of await this.mover.pending(move.id)) {
      await this.hold.renewOrStop(move);
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
        outcome = await this.mover.move(entry, this.hold.progressOf(move));
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
        await this.feed.move(move, tenantOf(move), this.hold.progressOf(move));
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
      await this.files.move(move, tenantOf(move), () => this.hold.renewOrStop(move));
    }
    await this.toRetiring(move);
  }

  private async retire(move: TenantMove): Promise<void> {
    await this.hold.waitUntil(move, (move.switchedAt ?? new Date()).getTime() + this.graceMs);
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
  /** Takes over the moves whose lease ran out; whether any move runs (the poll keeps pace). */
  private async takeOverAbandoned(): Promise<boolean> {
    const running = await this.moves.findRunningByLease(TAKEOVER_BATCH);
    const now = Date.now();
    for (const move of running) {
      if (this.runs.stopping || move.leaseUntil.getTime() >= now) break;
      if (!(await this.moves.takeOver(move, this.leaseFrom()))) continue;
      this.logger.log({ move: move.id }, 'resuming a tenant move');
      this.continueInBackground(move);
    }
    return running.length > 0;
  }
}
