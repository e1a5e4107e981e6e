import { Injectable } from '@nestjs/common';
import { DUPLICATE } from '../common/mongo/duplicate';
import type { Tenant } from '../common/tenancy/namespace';
import { CollectionMover } from '../data';
import { DataClusters, TenantPlacements } from '../placement';
import { ProfileService } from '../profile';
import { TeamService } from '../team';
import { digestOf, ErasureRepository } from './erasure.repository';
import {
  MoveConflictError,
  MoveNotFoundError,
  TenantNotFoundError,
  UnknownClusterError,
} from './lifecycle.errors';
import { tenantExists } from './tenant-exists';
import { TenantMoveRunner } from './tenant-move-runner';
import { TenantMoveRepository, type TenantMove } from './tenant-move.repository';

/**
 * Moving a tenant — every collection of every branch, with its items, indexes and unique-value
 * claims — to another cluster, online (docs/deployment.md, "Moving tenants"): the operator's
 * view of moves, and the rules of starting one. TenantMoveRunner runs them.
 */
@Injectable()
export class TenantMoves {
  constructor(
    private readonly moves: TenantMoveRepository,
    private readonly erasures: ErasureRepository,
    private readonly mover: CollectionMover,
    private readonly clusters: DataClusters,
    private readonly placements: TenantPlacements,
    private readonly profiles: ProfileService,
    private readonly teams: TeamService,
    private readonly runner: TenantMoveRunner,
  ) {}

  /**
   * Starts moving the tenant to `cluster` and returns the move. 400 UNKNOWN_CLUSTER; 404 when
   * there is no such tenant; 409 CLUSTER_CLOSED, ALREADY_ON_CLUSTER, MOVE_RUNNING or
   * ERASURE_RUNNING.
   */
  async start(tenant: Tenant, cluster: string): Promise<TenantMove> {
    const target = this.clusters.get(cluster);
    if (!target) {
      throw new UnknownClusterError(
        cluster,
        this.clusters.list().map((c) => c.name),
      );
    }
    if (!(await tenantExists(tenant, this.profiles, this.teams))) {
      throw new TenantNotFoundError(tenant);
    }
    const database = this.placements.databaseOf(tenant);
    await this.refuseDuringErasure(tenant);
    const running = await this.moves.findRunning(database);
    if (running) throw this.runningConflict(running);
    if (!target.open) {
      throw new MoveConflictError(
        'CLUSTER_CLOSED',
        `The cluster ${cluster} is closed to new tenants (open: false in DATA_CLUSTERS).`,
      );
    }
    const from = (await this.placements.locate(tenant)).cluster;
    // There already: its collections, and its feed with what sits beside it.
    const feed = (await this.placements.feedOf(tenant, { fresh: true })).cluster;
    if (
      from === cluster &&
      this.clusters.sameDeployment(feed, cluster) &&
      (await this.mover.countNotOn(tenant, cluster)) === 0
    ) {
      throw new MoveConflictError(
        'ALREADY_ON_CLUSTER',
        `The ${tenant.kind} is on the cluster ${cluster} already.`,
      );
    }
    const now = new Date();
    const move = await this.moves.insertRunning(
      tenant,
      database,
      cluster,
      from,
      now,
      this.runner.leaseFrom(now),
    );
    if (move === DUPLICATE) {
      const concurrent = await this.moves.findRunning(database);
      throw concurrent ? this.runningConflict(concurrent) : new Error('the move vanished');
    }
    // An erasure started meanwhile: it goes first (its steps wait while a move runs).
    try {
      await this.refuseDuringErasure(tenant);
    } catch (error) {
      await this.moves.remove(move.id);
      throw error;
    }
    this.runner.continueInBackground(move);
    return move;
  }

  async get(id: string): Promise<TenantMove> {
    const move = await this.moves.findById(id);
    if (!move) throw new MoveNotFoundError(id);
    return move;
  }

  list(limit: number, afterId?: string): Promise<{ moves: TenantMove[]; more: boolean }> {
    return this.moves.list(limit, afterId);
  }

  /** Whether a move of the tenant runs (an erasure waits for it to end). */
  async isRunning(tenant: Tenant): Promise<boolean> {
    return (await this.moves.findRunning(this.placements.databaseOf(tenant))) !== null;
  }

  private runningConflict(move: TenantMove): MoveConflictError {
    return new MoveConflictError(
      'MOVE_RUNNING',
      `A move of the tenant to ${move.cluster} is running: /admin/moves/${move.id}.`,
      { existingId: move.id },
    );
  }

  private async refuseDuringErasure(tenant: Tenant): Promise<void> {
    const erasure = await this.erasures.findActive(digestOf(tenant));
    if (erasure) {
      throw new MoveConflictError(
        'ERASURE_RUNNING',
        `The ${tenant.kind} is being erased: /admin/erasures/${erasure.id}.`,
        { existingId: erasure.id },
      );
    }
  }
}
