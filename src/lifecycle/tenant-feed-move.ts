import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { FeedMover } from '../events';
import {
  CATCH_UP_PASSES,
  CHANGE_MARKER_MARGIN_MS,
  ClusterIdempotencyStores,
  DataClusters,
  feedWriteTarget,
  MoveGivenUpError,
  MoveWriteMarkers,
  switchWithPause,
  TenantPlacements,
  type MoveProgress,
} from '../placement';
import { WebhooksService } from '../webhooks/webhooks.service';
import { TenantMoveRepository, type TenantMove } from './tenant-move.repository';

/**
 * The change feed's part of a tenant move, with what sits beside it in the cluster database: the
 * webhook deliveries (the delivery runner leaves a moving tenant alone until the switch) and the
 * stored idempotent responses (a request that holds a key marks itself, like a write). Announced with the collections (the placement's
 * `feedMoving`, read afresh by every instance once the grace has passed, and every write that
 * records events marks itself: FeedWriteGate); copied and switched after them, with the tenant's
 * event-recording writes paused for the last comparison (MOVE_MAX_WRITE_PAUSE_MS); its source
 * removed with the collections'. A reader following the feed through an instance that still has
 * the old placement cached reads the source, which holds every event up to the switch, and
 * continues at the target from its cursor once the cache expires: no gap, no repeat.
 */
@Injectable()
export class TenantFeedMove {
  private readonly maxPauseMs: number;

  constructor(
    private readonly moves: TenantMoveRepository,
    private readonly placements: TenantPlacements,
    private readonly clusters: DataClusters,
    private readonly feeds: FeedMover,
    private readonly markers: MoveWriteMarkers,
    private readonly webhooks: WebhooksService,
    private readonly records: ClusterIdempotencyStores,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxPauseMs = config.clusters.moveMaxWritePauseMs;
  }

  /** Marks the feed as moving, unless it is in the target's deployment already. */
  async announce(move: TenantMove, tenant: Tenant): Promise<void> {
    const feed = await this.placements.feedOf(tenant, { fresh: true });
    if (feed.moving?.move === move.id) return;
    if (this.clusters.sameDeployment(feed.cluster, move.cluster)) {
      // The same cluster database: nothing to copy.
      await this.placements.switchFeed(tenant, move.cluster);
      return;
    }
    move.feedMoves = true;
    move.feedFrom = feed.cluster;
    await this.moves.update(move.id, { feedMoves: true, feedFrom: feed.cluster });
    await this.placements.setFeedMoving(tenant, {
      to: move.cluster,
      move: move.id,
      phase: 'copying',
    });
  }

  /**
   * Copies the feed and switches it; `progress` as for a collection. Passes as a collection's:
   * the first compares everything, later ones copy the events appended since the one before
   * (deliveries and records, few, are compared whole), then the pause, whatever is left.
   */
  async move(move: TenantMove, tenant: Tenant, progress: MoveProgress): Promise<void> {
    if (!move.feedMoves) return;
    const feed = await this.placements.feedOf(tenant, { fresh: true });
    // Switched already, by an earlier run.
    if (!feed.moving && this.clusters.sameDeployment(feed.cluster, move.cluster)) return;
    if (feed.moving?.move !== move.id) throw new Error('the feed is not marked for this move');
    // A run that died during the pause left it paused.
    if (feed.moving.phase === 'paused') await this.setPhase(move, tenant, 'copying');
    const way = { from: move.feedFrom, to: move.cluster };
    const target = feedWriteTarget(this.placements.databaseOf(tenant));
    const passStart = async () => {
      const now = Date.now();
      const oldest = (await this.markers.oldestUnderWay(target))?.getTime() ?? now;
      return new Date(Math.min(now, oldest) - CHANGE_MARKER_MARGIN_MS);
    };
    let since: Date | undefined;
    // The events (all of them, since the last pass, or the last time with the intents of dead
    // writes), deliveries and records.
    const copyAll = async (pass: number, last: boolean) => {
      await progress.report(pass, 0);
      const report = ({ left }: { left: number }) => progress.report(pass, left);
      const next = await passStart();
      // Three collections of the cluster database, read side by side.
      const copies = await Promise.all([
        last
          ? this.feeds.finish(tenant, way, since, report)
          : this.feeds.copyEvents(tenant, way, since, report),
        this.webhooks.copyDeliveries(tenant, way),
        this.records.copyTenant(tenant, way),
      ]);
      await report({ left: 0 });
      since = next;
      return {
        copied: copies.reduce((sum, c) => sum + c.copied, 0),
        refused: copies.reduce((sum, c) => sum + c.refused, 0),
      };
    };
    let pass = 0;
    try {
      while (pass < CATCH_UP_PASSES) {
        pass += 1;
        if (!(await progress.holdLease())) throw new Error('the move’s lease ran out');
        if ((await copyAll(pass, false)).copied === 0) break;
      }
      await switchWithPause(
        {
          target,
          pause: async () => {
            await this.setPhase(move, tenant, 'paused');
            return true;
          },
          unpause: () => this.setPhase(move, tenant, 'copying'),
          copy: async (at) => (await copyAll(at, true)).refused === 0,
          catchUp: async (at) => void (await copyAll(at, false)),
          switchOver: async () => {
            await this.placements.switchFeed(tenant, move.cluster);
            return true;
          },
        },
        this.markers,
        this.maxPauseMs,
        progress,
        pass + 1,
      );
    } catch (error) {
      // Given up (the move fails, in a pass or a pause): the feed stays where it is, its writes
      // no longer marked. Anything else (a lost lease, a database error) leaves it marked for
      // the next run.
      if (error instanceof MoveGivenUpError) await this.placements.setFeedMoving(tenant, null);
      throw error;
    }
  }

  /** Leaves the feed where it is (the move failed before it): its writes are no longer marked. */
  async abandon(move: TenantMove, tenant: Tenant): Promise<void> {
    const feed = await this.placements.feedOf(tenant, { fresh: true });
    if (feed.moving?.move === move.id) await this.placements.setFeedMoving(tenant, null);
  }

  /**
   * Removes the source of the feed, deliveries and records (after the grace), when they moved;
   * when they did not (the move failed), the copies the move made on the target.
   */
  async retire(move: TenantMove, tenant: Tenant): Promise<void> {
    if (!move.feedMoves) return;
    const feed = await this.placements.feedOf(tenant, { fresh: true });
    const switched = feed.cluster === move.cluster;
    if (!switched && this.clusters.sameDeployment(feed.cluster, move.cluster)) return;
    const from = switched ? move.feedFrom : move.cluster;
    await this.feeds.removeFrom(tenant, from);
    await this.webhooks.removeDeliveriesFrom(tenant, from);
    await this.records.deleteTenantIn(tenant, from);
  }

  private setPhase(move: TenantMove, tenant: Tenant, phase: 'copying' | 'paused') {
    return this.placements.setFeedMoving(tenant, { to: move.cluster, move: move.id, phase });
  }
}
