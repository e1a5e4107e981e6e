import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Document } from 'mongodb';
import { BackgroundRuns } from '../../common/scheduling/background-runs';
import { BackgroundTasks, type BackgroundTask } from '../../common/scheduling/background-tasks';
import { FallbackWriteQueue } from '../../common/mongo/fallback-database';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionRegistryRepository } from '../collections/collection-registry.repository';
import { CollectionWriteGate } from '../collections/collection-write.gate';
import type { RegisteredCollection } from '../collections/registered-collection';
import { CollectionMovingError, TooManyWordsError } from '../data.errors';
import { itemETag, revisionCondition, tagOf } from '../items/item-revision';
import { writeKey } from '../items/item-write-queue';
import { WORDS_FIELD } from '../query/data.constants';
import { TenantStorage } from '../storage/tenant-storage';
import { SearchBuildRepository, type SearchRun } from './search-build.repository';
import { searchRuleOf, wordsOf, type SearchRule } from './search-rule';

/**
 * Beyond REGISTRY_CACHE_MS, how long a run waits after the change of configuration before it
 * starts: a write that read the registry entry just before the change may still be under way.
 */
export const SEARCH_START_MARGIN_MS = 1_000;

/** Abandoned runs one poll takes over at most. */
const TAKEOVER_LIMIT = 10;

/** The longest wait between two looks at `stopping` while a run waits for its start. */
const WAIT_STEP_MS = 100;

/** How long a batch refused by a move's pause waits before it is tried again (its Retry-After). */
const MOVE_PAUSE_WAIT_MS = 1_000;

/** What one batch came to: the walk goes on after `lastId`, or it is over. */
type BatchOutcome = { kind: 'walked'; lastId: unknown; count: number } | { kind: 'over' };

/** The run is held by another holder now (its lease ran out under this one). */
class LeaseLost extends Error {
  override name = 'LeaseLost';
}

/**
 * The lease of a run while this instance works on it, renewed on a timer (every third of the
 * lease) rather than between batches: a batch, or one write of it, may take longer than the
 * lease where every write scans (FerretDB) or the database is slow, and a lease left to run out
 * would let another holder start the same walk. A renewal that finds the run held by another
 * holder marks the lease lost; the walk stops at its next item.
 */
class HeldLease {
  private lost = false;
  private readonly timer: NodeJS.Timeout;

  constructor(renew: () => Promise<boolean>, everyMs: number, logger: Logger) {
    this.timer = setInterval(() => {
      renew().then(
        (held) => {
          if (!held) this.lost = true;
        },
        // A failed renewal (the database is down) is tried again at the next tick; the walk's
        // own commands fail meanwhile.
        (error: unknown) => logger.warn({ err: error }, 'search run lease not renewed'),
      );
    }, everyMs);
    this.timer.unref();
  }

  /** LeaseLost when a renewal found the run held by another holder. */
  assertHeld(): void {
    if (this.lost) throw new LeaseLost();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function sameWords(stored: unknown, words: string[]): boolean {
  return (
    Array.isArray(stored) &&
    stored.length === words.length &&
    stored.every((word, i) => word === words[i])
  );
}

/**
 * Runs the builds and clears of word lists (docs/data.md, "Search") under a lease, like
 * erasures: the instance that took the configuration change starts the run; a background task
 * on every instance takes over a run whose lease ran out (its holder died) and goes on after the
 * last `_id` recorded. A build walks the items in `_id` order, computes each item's words and
 * writes the ones that differ, conditional on the revision read (a hidden field: the revision is
 * not counted, the item's ETag stays) and inside the item's write queue, so this instance's
 * writers and the build never interleave on one item; a revision that moved is read again. A
 * newer configuration (or none) stops a build at its next batch; the last batch makes the
 * configuration `ready` if it is still the one built.
 *
 * Each batch (its read and its writes) passes the collection's move gate (CollectionWriteGate),
 * as a client's write does, and works on the entry the gate hands over: while a tenant move
 * copies the collection the batch holds a marker, so the move's pause waits for it and its last
 * comparison (which sees a change of words) copies what it wrote; while the move's writes are
 * paused the batch waits and is tried again; after the switch it reads and writes the new
 * location. A collection dropped meanwhile ends the run quietly.
 */
@Injectable()
export class SearchBuildRunner implements OnModuleDestroy {
  private readonly logger = new Logger('SearchBuilds');
  private readonly leaseMs: number;
  private readonly batch: number;
  private readonly maxWords: number;
  private readonly task: BackgroundTask;
  private readonly runs: BackgroundRuns;

  constructor(
    private readonly records: SearchBuildRepository,
    private readonly registry: CollectionRegistryRepository,
    private readonly storage: TenantStorage,
    private readonly queue: FallbackWriteQueue,
    private readonly gate: CollectionWriteGate,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.leaseMs = config.lifecycle.searchBuildLeaseMs;
    this.batch = config.lifecycle.searchBuildBatch;
    this.maxWords = config.limits.searchMaxWordsPerItem;
    this.task = tasks.register({
      name: 'search-builds',
      intervalMs: config.lifecycle.pollMs,
      // Backs off only while no build runs; one that starts is seen within its first lease, so
      // one abandoned is still taken over within SEARCH_BUILD_LEASE_MS plus LIFECYCLE_POLL_MS.
      idleBackoff: { maxMs: config.lifecycle.searchBuildLeaseMs },
      run: () => this.takeOverAbandoned(),
    });
    this.runs = new BackgroundRuns(this.task, this.logger);
  }

  /** Stops every run at its next batch and waits for it; another instance takes it over. */
  async onModuleDestroy(): Promise<void> {
    await this.runs.stop();
  }

  leaseFrom(now: Date = new Date()): Date {
    return new Date(now.getTime() + this.leaseMs);
  }

  /** Works on a run this instance holds, in the background. */
  start(run: SearchRun): void {
    this.runs.start(() => this.work(run), 'search run interrupted', {
      run: run.id,
      kind: run.kind,
    });
  }

  /**
   * Takes over running runs whose holder let the lease run out (it died, or stopped); whether
   * any run is running (the poll keeps its pace then).
   */
  async takeOverAbandoned(): Promise<boolean> {
    const running = await this.records.findRunningByLease(TAKEOVER_LIMIT);
    const now = Date.now();
    for (const abandoned of running) {
      if (this.runs.stopping || abandoned.leaseUntil.getTime() >= now) break;
      const run = await this.records.takeOver(abandoned, this.leaseFrom());
      if (run) this.start(run);
    }
    return running.length > 0;
  }

  private async work(run: SearchRun): Promise<void> {
    const lease = new HeldLease(
      () => this.records.renew(run, this.leaseFrom()),
      this.leaseMs / 3,
      this.logger,
    );
    try {
      await this.walk(run, lease);
    } catch (error) {
      // Another holder took the run over (this one's lease ran out): it goes on from the record.
      if (!(error instanceof LeaseLost)) throw error;
      this.logger.warn({ run: run.id }, 'search run taken over by another holder');
    } finally {
      lease.stop();
    }
  }

  private async walk(run: SearchRun, lease: HeldLease): Promise<void> {
    if (!(await this.waitForStart(run, lease))) return;
    let lastId = run.lastId;
    let indexed = run.indexed;
    for (;;) {
      if (this.runs.stopping) return;
      const fresh = await this.registry.find(run.tenant, run.branch, run.name, { fresh: true });
      if (!fresh || fresh.id !== run.entryId) return this.records.markDone(run.id);
      const rule = searchRuleOf(fresh);
      const current = run.kind === 'build' ? rule?.version === run.version : rule === null;
      // Superseded: a newer configuration (its own build), or none any more (its clear).
      if (!current) return this.records.markDone(run.id);
      let outcome: BatchOutcome;
      try {
        outcome = await this.gate.write(run.tenant, run.branch, run.name, (entry) =>
          entry && entry.id === run.entryId
            ? this.walkBatch(run, entry, rule, lastId, lease)
            : Promise.resolve<BatchOutcome>({ kind: 'over' }),
        );
      } catch (error) {
        if (!(error instanceof CollectionMovingError)) throw error;
        // A move's writes are paused for a moment: the same batch again after it.
        if (!(await this.pauseFor(MOVE_PAUSE_WAIT_MS))) return;
        continue;
      }
      if (outcome.kind === 'over') return this.records.markDone(run.id);
      lastId = outcome.lastId;
      indexed += outcome.count;
      lease.assertHeld();
      if (!(await this.records.recordBatch(run, lastId, indexed, this.leaseFrom())))
        throw new LeaseLost();
    }
  }

  /**
   * One batch of the run, after `lastId`, in the collection where `entry` (handed over by the
   * move gate) says it is: its words written (a build) or removed (a clear); `over` when the walk
   * is done (the configuration settled) or a build failed.
   */
  private async walkBatch(
    run: SearchRun,
    entry: RegisteredCollection,
    rule: SearchRule | null,
    lastId: unknown,
    lease: HeldLease,
  ): Promise<BatchOutcome> {
    const items = await this.storage
      .itemsOf(entry)
      .find(lastId === undefined ? {} : { _id: { $gt: lastId as string } })
      .sort({ _id: 1 })
      .limit(this.batch)
      .toArray();
    if (items.length === 0) {
      if (run.kind === 'build') await this.settle(entry, rule as SearchRule, 'ready');
      return { kind: 'over' };
    }
    if (run.kind === 'build') {
      const failure = await this.writeWords(entry, rule as SearchRule, items, lease);
      if (failure) {
        await this.settle(entry, rule as SearchRule, 'failed', failure);
        return { kind: 'over' };
      }
    } else {
      await this.storage
        .itemsOf(entry)
        .updateMany(
          { _id: { $in: items.map((item) => item._id) }, [WORDS_FIELD]: { $exists: true } },
          { $unset: { [WORDS_FIELD]: '' } },
        );
    }
    return { kind: 'walked', lastId: items[items.length - 1]?._id, count: items.length };
  }

  /** Waits `ms`, looking at `stopping` on the way; false when the instance stops meanwhile. */
  private async pauseFor(ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    for (;;) {
      if (this.runs.stopping) return false;
      const left = until - Date.now();
      if (left <= 0) return true;
      await new Promise((resolve) => setTimeout(resolve, Math.min(WAIT_STEP_MS, left)));
    }
  }

  /** Waits for the run's start, renewing the lease; false when the instance stops meanwhile. */
  private async waitForStart(run: SearchRun, lease: HeldLease): Promise<boolean> {
    for (;;) {
      if (this.runs.stopping) return false;
      const now = Date.now();
      if (now >= run.startAt.getTime()) return true;
      lease.assertHeld();
      const wait = Math.min(WAIT_STEP_MS, run.startAt.getTime() - now);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /**
   * Writes the words of a batch's items where they differ; the failure (an item over
   * SEARCH_MAX_WORDS_PER_ITEM) that ends the build, or null.
   */
  private async writeWords(
    entry: RegisteredCollection,
    rule: SearchRule,
    items: Document[],
    lease: HeldLease,
  ): Promise<{ code: string; detail: string } | null> {
    const items$ = this.storage.itemsOf(entry);
    for (const read of items) {
      lease.assertHeld();
      const id = read._id as string;
      try {
        await this.queue.run(writeKey(entry.physical, String(id)), async () => {
          let item: Document | null = read;
          while (item) {
            const { [WORDS_FIELD]: words } = wordsOf(rule, item, this.maxWords);
            if (sameWords(item[WORDS_FIELD], words)) return;
            const written = await items$.updateOne(
              { _id: id, ...revisionCondition(tagOf(itemETag(item))) },
              { $set: { [WORDS_FIELD]: words } },
            );
            if (written.matchedCount === 1) return;
            // Written (or deleted) since it was read: read it again.
            item = await items$.findOne({ _id: id });
          }
        });
      } catch (error) {
        if (!(error instanceof TooManyWordsError)) throw error;
        return {
          code: 'TOO_MANY_WORDS',
          detail: `Item '${String(id)}': ${error.message}`,
        };
      }
    }
    return null;
  }

  /** Sets the configuration's state when it is still the one built (and still building). */
  private async settle(
    entry: RegisteredCollection,
    rule: SearchRule,
    state: 'ready' | 'failed',
    failure?: { code: string; detail: string },
  ): Promise<void> {
    const settled: SearchRule = { ...rule, state, ...(failure ? { failure } : {}) };
    await this.registry.changeRules(
      entry,
      { search: settled },
      { 'rules.search.version': rule.version, 'rules.search.state': 'building' },
    );
  }
}
