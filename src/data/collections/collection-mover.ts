import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config';
import { UniqueClaimRepository } from '../items/unique/unique-claim.repository';
import { REVISION_FIELD } from '../query/data.constants';
import { syncDocuments } from '../../common/mongo/document-sync';
import { TenantStorage, type NativeCollection } from '../storage/tenant-storage';
import type { Tenant } from '../../auth';
import type { RegisteredCollection } from './collection-registry.repository';
import { CollectionRegistryRepository } from './collection-registry.repository';
import { CollectionDropsService } from './collection-drops.service';
import { MoveWriteMarkers, switchWithPause } from '../../placement';

/** Comparisons while writes go on, before the first pause: each copies what changed since the last. */
const CATCH_UP_PASSES = 3;
/** A comparison that copied fewer items than this is close enough to pause. */
const CLOSE_ENOUGH = 50;

/** What a collection's move came to. */
export type CollectionMoveOutcome =
  | { kind: 'switched'; itemsCopied: number }
  /** Dropped by its tenant while it was moved: nothing to switch. */
  | { kind: 'gone'; itemsCopied: number };

/**
 * Moves one collection of a tenant move (its registry entry marked `moving` by the move) to its
 * new location, online:
 *
 * 1. its indexes, items and unique-value claims are copied while writes go on at the source
 *    (syncDocuments: each comparison copies what changed since the last);
 * 2. its writes are paused: every instance reads the entry afresh per write and answers 503
 *    COLLECTION_MOVING; the writes already under way (their markers) finish first;
 * 3. a last comparison makes the target equal to the source, deletions included;
 * 4. the entry is switched to the target, which ends the pause.
 *
 * A pause that cannot end within MOVE_MAX_WRITE_PAUSE_MS (writes under way too long, a slow
 * comparison) is lifted without switching, the writes go on, and the pause is tried again. The
 * source stays as it is: the tenant move removes it once no instance can still read it.
 */
@Injectable()
export class CollectionMover {
  private readonly logger = new Logger('CollectionMover');
  private readonly maxPauseMs: number;

  constructor(
    private readonly registry: CollectionRegistryRepository,
    private readonly markers: MoveWriteMarkers,
    private readonly storage: TenantStorage,
    private readonly claims: UniqueClaimRepository,
    private readonly drops: CollectionDropsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.maxPauseMs = config.clusters.moveMaxWritePauseMs;
  }

  /**
   * Marks the tenant's collections (every branch) that are not at `to` as moved by `move`; how
   * many it marked now. From then on every instance reads their entries afresh.
   */
  announce(
    tenant: Tenant,
    move: string,
    to: { cluster: string; database: string },
  ): Promise<number> {
    return this.registry.announceMove(tenant, move, to);
  }

  /** The collections the move has not switched yet, oldest first. */
  pending(move: string): Promise<RegisteredCollection[]> {
    return this.registry.movedBy(move);
  }

  /** How many of the tenant's collections are not on the cluster, or are being moved. */
  countNotOn(tenant: Tenant, cluster: string): Promise<number> {
    return this.registry.countNotOn(tenant, cluster);
  }

  /** Whether a collection's source must be removed after its move (not when it stayed in place). */
  leavesSource(entry: RegisteredCollection): boolean {
    const moving = entry.moving;
    if (!moving) return false;
    return !this.storage.sameNamespace(entry, { physical: entry.physical, ...moving });
  }

  /**
   * Removes the sources of a move's collections (under tombstones, CollectionDropsService), and
   * the copies of those dropped while they were moved; then the tenant's database on a source
   * cluster, with whatever is left in it. Called once no instance can read them any more.
   */
  async removeSources(
    sources: readonly NativeCollection[],
    orphans: readonly NativeCollection[],
    databases: readonly { cluster: string; database: string }[],
  ): Promise<void> {
    for (const source of sources) await this.drops.removeMovedSource(source);
    for (const orphan of orphans) await this.drops.removeMovedSource(orphan);
    for (const database of databases) await this.storage.dropDatabase(database);
  }

  /** Lifts the pauses a run of the move left (it died during one): a new run starts over. */
  async resume(move: string): Promise<void> {
    for (const entry of await this.registry.movedBy(move)) {
      if (entry.moving?.phase === 'paused') {
        await this.registry.setMovePhase(entry.id, move, 'copying');
      }
    }
  }

  /** Ends a move's marks on the collections it did not switch: they stay where they are. */
  async abandon(move: string): Promise<void> {
    for (const entry of await this.registry.movedBy(move)) {
      await this.registry.endMove(entry.id, move);
    }
  }

  /**
   * Moves the collection; `holdLease` renews this instance's hold on the move and says whether
   * it still has it with room for a whole pause — asked before each pause and before the switch.
   */
  async move(
    entry: RegisteredCollection,
    holdLease: () => Promise<boolean>,
  ): Promise<CollectionMoveOutcome> {
    const moving = entry.moving;
    if (!moving) throw new Error('the entry is not being moved');
    const from: NativeCollection = {
      physical: entry.physical,
      ...(entry.cluster !== undefined ? { cluster: entry.cluster, database: entry.database } : {}),
    };
    const to: NativeCollection = {
      physical: entry.physical,
      cluster: moving.cluster,
      database: moving.database,
    };
    const switchNow = async (): Promise<boolean> =>
      this.registry.switchLocation(entry.id, moving.move, {
        cluster: moving.cluster,
        database: moving.database,
      });
    // Two cluster names for one deployment: the collection is where it goes already.
    if (this.storage.sameNamespace(from, to)) {
      return { kind: (await switchNow()) ? 'switched' : 'gone', itemsCopied: 0 };
    }
    let itemsCopied = 0;
    const copy = async () => {
      await this.storage.copyIndexes(from, to);
      const items = await syncDocuments(
        this.storage.collectionOf(from),
        this.storage.collectionOf(to),
        {},
        [REVISION_FIELD],
      );
      const claims = await this.claims.copy(from, to);
      itemsCopied += items.copied;
      return { copied: items.copied + claims.copied, refused: items.refused + claims.refused };
    };

    for (let pass = 0; pass < CATCH_UP_PASSES; pass += 1) {
      if (!(await holdLease())) throw new Error('the move’s lease ran out');
      const { copied } = await copy();
      if (copied < CLOSE_ENOUGH) break;
    }
    const outcome = await switchWithPause(
      {
        target: entry.id,
        pause: () => this.registry.setMovePhase(entry.id, moving.move, 'paused'),
        unpause: async () => {
          await this.registry.setMovePhase(entry.id, moving.move, 'copying');
          this.logger.warn({ entry: entry.id }, 'pause lifted without switching');
        },
        copy: async () => (await copy()).refused === 0,
        switchOver: switchNow,
      },
      this.markers,
      this.maxPauseMs,
      holdLease,
    );
    return { kind: outcome, itemsCopied };
  }
}
