import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../../../common/errors';
import { BackgroundTasks, type BackgroundTask } from '../../../common/scheduling/background-tasks';
import { APP_CONFIG, type AppConfig } from '../../../config';
import { ExpiringCollectionsRepository } from './expiring-collections.repository';
import { ItemExpiry, type ExpiringCollection } from './item-expiry';

/** Expired items one delete round takes from a collection (one event intent, one read). */
export const EXPIRY_BATCH = 200;
/** Items one sweep deletes at most, over every collection; the next sweep takes the rest. */
export const EXPIRY_ROUND_ITEMS = 10_000;
/** Registry entries read per round trip while a sweep walks the collections with a rule. */
const ENTRIES_BATCH = 100;

/**
 * Deletes expired items, every EXPIRY_SWEEP_MS on every instance (a background task, stopped on
 * shutdown before the database connection closes): each collection with an expiry rule, in
 * rounds of EXPIRY_BATCH, at most EXPIRY_ROUND_ITEMS per sweep. Instances sweep the same
 * collections without coordinating: ItemExpiry records each item's expiry exactly once. A
 * failing database fails the sweep (logged by the task host); the next one starts over.
 */
@Injectable()
export class ExpirySweep {
  private readonly logger = new Logger('ExpirySweep');
  private readonly task: BackgroundTask;

  constructor(
    private readonly collections: ExpiringCollectionsRepository,
    private readonly expiry: ItemExpiry,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.task = tasks.register({
      name: 'expiry-sweep',
      intervalMs: config.lifecycle.expirySweepMs,
      run: () => this.run(),
    });
  }

  /** One sweep now; a call while one runs joins it. */
  runNow(): Promise<void> {
    return this.task.runNow();
  }

  private async run(): Promise<void> {
    let budget = EXPIRY_ROUND_ITEMS;
    for await (const collection of this.collections.all(ENTRIES_BATCH)) {
      if (this.task.isStopped || budget <= 0) return;
      // A collection being moved is left to its move; its items expire on the target.
      if (collection.entry.moving) continue;
      try {
        budget -= await this.sweep(collection, budget);
      } catch (error) {
        // Refused (its writes paused by a move, its feed moving): the next sweep takes it.
        if (!(error instanceof DomainError)) throw error;
        this.logger.warn({ err: error }, `expiry of ${collection.entry.physical} postponed`);
      }
    }
  }

  /** Deletes the collection's expired items, up to `budget`; how many it found. */
  private async sweep(collection: ExpiringCollection, budget: number): Promise<number> {
    let found = 0;
    while (found < budget && !this.task.isStopped) {
      const limit = Math.min(EXPIRY_BATCH, budget - found);
      const round = await this.expiry.expireMatching(
        collection,
        { scope: null, conditions: [] },
        limit,
        { stopped: () => this.task.isStopped },
      );
      found += round.found;
      // Fewer deleted than found: another instance deleted (and recorded) the others.
      if (round.found > 0)
        this.logger.debug(
          `expiry round of ${collection.entry.physical}: found ${round.found}, deleted ${round.deleted}`,
        );
      if (round.found < limit) break;
    }
    return found;
  }
}
