import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config';
import { UniqueClaimRepository } from '../items/unique/unique-claim.repository';
import { REVISION_FIELD, WORDS_FIELD } from '../query/data.constants';
import { copyChanged, syncDocuments } from '../../common/mongo/document-sync';
import { TenantStorage, type NativeCollection } from '../storage/tenant-storage';
import type { Tenant } from '../../auth';
import type { RegisteredCollection } from './collection-registry.repository';
import { CollectionRegistryRepository } from './collection-registry.repository';
import { CollectionDropsService } from './collection-drops.service';
import {
  CATCH_UP_PASSES,
  CHANGE_MARKER_MARGIN_MS,
  MoveWriteMarkers,
  switchWithPause,
  type MoveProgress,
} from '../../placement';

/** A catch-up pass that found fewer changed items than this is close enough to pause. */
const CLOSE_ENOUGH = 50;
/** The change marker of items: every write sets it (the writing instance's clock). */
const CHANGE_MARKER = '_updatedAt';
/**
 * What tells two copies of an item apart in a comparison of everything: the revision, which
 * every write of the item's content changes, and its words, which a search build writes without
 * changing either the revision or the change marker (the item's ETag stays). The catch-up passes
 * read changes by the change marker only, so they may miss words a build wrote; the last
 * comparison, paused, may not: it runs after every batch of a build that marked itself under way
 * (CollectionWriteGate) is done, and recopies an item whose words differ.
 */
const FINGERPRINT = [REVISION_FIELD, WORDS_FIELD] as const;

/** What a collection's move came to. */
export type CollectionMoveOutcome =
  | { kind: 'switched'; itemsCopied: number }
  /** Dropped by its tenant while it was moved: nothing to switch. */
  | { kind: 'gone'; itemsCopied: number };

/**
 * Moves one collection of a tenant move (its registry entry marked `moving` by the move) to its
 * new location, online:
 *
 * 1. its indexes, items and unique-value claims are copied while writes go on at the source, in
 *    at most CATCH_UP_PASSES passes: the first compares everything (syncDocuments), each later
 *    one copies only the items and claims changed since the one before (copyChanged, by their
 *    change marker), and fewer than CLOSE_ENOUGH changes end them early;
 * 2. its writes are paused, whatever difference is left: every instance reads the entry afresh
 *    per write and answers 503 COLLECTION_MOVING; the writes already under way (their markers)
 *    finish first;
 * 3. a last comparison makes the target equal to the source, deletions included;
 * 4. the entry is switched to the target, which ends the pause.
 *
 * A pause that cannot end within MOVE_MAX_WRITE_PAUSE_MS (writes under way too long, a last
 * comparison too slow) is lifted without switching, one catch-up pass copies what changed, and the
 * pause is tried again, PAUSE_ATTEMPTS times in all; then the move gives up (PauseTooLongError).
 * The source stays as it is: the tenant move removes it once no instance can still read it.
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

  /** How many items the collection holds (a move's deadline counts them). */
  countItems(entry: RegisteredCollection): Promise<number> {
    return this.storage.itemsOf(locationOf(entry)).countDocuments({});
  }

  /**
   * Moves the collection; `progress` renews this instance's hold on the move (asked before each
   * pass, each pause and the switch) and hears each pass's progress.
   */
  async move(entry: RegisteredCollection, progress: MoveProgress): Promise<CollectionMoveOutcome> {
    const moving = entry.moving;
    if (!moving) throw new Error('the entry is not being moved');
    const from = locationOf(entry);
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
    const source = this.storage.itemsOf(from);
    const target = this.storage.itemsOf(to);
    /** A comparison of everything: the first pass, and the last one, paused. */
    const compareAll = async (pass: number) => {
      await this.storage.copyIndexes(from, to);
      const report = ({ left }: { left: number }) => progress.report(pass, left);
      const items = await syncDocuments(source, target, {}, FINGERPRINT, report);
      const claims = await this.claims.copy(from, to, report);
      itemsCopied += items.copied;
      return { copied: items.copied, refused: items.refused + claims.refused };
    };
    // Where the next catch-up pass starts reading changes, and the items and claims a unique
    // index refused in the last one (tried again).
    let since = await this.passStart(entry.id);
    let retry = { items: [] as unknown[], claims: [] as unknown[] };
    /** The changes since the pass before: what a catch-up pass reads. */
    const catchUp = async (pass: number) => {
      const next = await this.passStart(entry.id);
      const report = ({ left }: { left: number }) => progress.report(pass, left);
      await this.storage.copyIndexes(from, to);
      const items = await copyChanged(
        source,
        target,
        {},
        CHANGE_MARKER,
        since,
        retry.items,
        report,
      );
      const claims = await this.claims.copyChanged(from, to, since, retry.claims, report);
      since = next;
      retry = { items: items.refusedIds, claims: claims.refusedIds };
      itemsCopied += items.copied;
      return items.copied + claims.copied;
    };

    let pass = 1;
    if (!(await progress.holdLease())) throw new Error('the move’s lease ran out');
    await compareAll(pass);
    while (pass < CATCH_UP_PASSES) {
      pass += 1;
      if (!(await progress.holdLease())) throw new Error('the move’s lease ran out');
      if ((await catchUp(pass)) < CLOSE_ENOUGH) break;
    }
    const outcome = await switchWithPause(
      {
        target: entry.id,
        pause: () => this.registry.setMovePhase(entry.id, moving.move, 'paused'),
        unpause: async () => {
          await this.registry.setMovePhase(entry.id, moving.move, 'copying');
          this.logger.warn({ entry: entry.id }, 'pause lifted without switching');
        },
        copy: async (at) => (await compareAll(at)).refused === 0,
        catchUp: async (at) => void (await catchUp(at)),
        switchOver: switchNow,
      },
      this.markers,
      this.maxPauseMs,
      progress,
      pass + 1,
    );
    return { kind: outcome, itemsCopied };
  }

  /**
   * Where a pass starting now reads changes from: before the oldest write under way (it may
   * set its change marker before this moment and store it after the pass read), less the
   * clocks' margin.
   */
  private async passStart(target: string): Promise<Date> {
    const now = Date.now();
    const oldest = (await this.markers.oldestUnderWay(target))?.getTime() ?? now;
    return new Date(Math.min(now, oldest) - CHANGE_MARKER_MARGIN_MS);
  }
}

/** Where a registry entry's collection is now. */
function locationOf(entry: RegisteredCollection): NativeCollection {
  return {
    physical: entry.physical,
    ...(entry.cluster !== undefined ? { cluster: entry.cluster, database: entry.database } : {}),
  };
}
