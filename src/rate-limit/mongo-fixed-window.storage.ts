import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Collection } from 'mongodb';
import type { Connection } from 'mongoose';
import { KeyedGroupCommits } from '../common/batching/group-commit';
import { DUPLICATE, orDuplicate, type Duplicate } from '../common/mongo/duplicate';
import { insertInOrder } from '../common/mongo/ordered-insert';
import { isDatabaseUnavailable } from '../common/errors';
import { claimSlot, type SlotSpace } from '../common/mongo/slots';
import { fixedWindow, secondsUntil } from './fixed-window';
import {
  hitId,
  hitRange,
  RATE_LIMIT_COLLECTION,
  SLOT_DIGITS,
  windowPrefix,
  type RateLimitHit,
} from './rate-limit-hits';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** Keys the process remembers where their window stands; beyond it the oldest are forgotten. */
const REMEMBERED_KEYS = 10_000;

/** Where the process believes one key's current window stands. */
class KeyWindow {
  /** The next slot to try: every slot below it is taken, or held by a request of this process. */
  next = 0;
  /** Whether `next` was read from the database in this window. */
  known = false;
  /** Another instance took a slot this process tried: read before every claim from now on. */
  contended = false;
  /** A read in flight, shared by the requests that need it. */
  reading: Promise<void> | undefined;
  /**
   * Slots this process inserted ahead and has not handed out yet: `[reservedFrom, reservedTo)`.
   * They are this instance's alone, so a request takes one without a command.
   */
  reservedFrom = 0;
  reservedTo = 0;

  constructor(
    readonly key: string,
    readonly start: number,
  ) {}

  /** The next slot claimed ahead, if one is left. */
  takeReserved(): number | undefined {
    return this.reservedFrom < this.reservedTo ? this.reservedFrom++ : undefined;
  }
}

/** A request a batch could not place: it claims its slot on its own (claimSlot). */
const ALONE: unique symbol = Symbol('alone');
type Alone = typeof ALONE;

/** Requests claimed in one insert at most. */
const BATCH_MAX = 100;

/**
 * Rate-limit counters for @nestjs/throttler in the database (RATE_LIMIT_STORE=mongo), so that all
 * instances share one budget per key: fixed windows of RATE_LIMIT_WINDOW_MS aligned to the epoch,
 * each admitted request one document whose `_id` names its slot (common/mongo/slots). An insert
 * of a taken `_id` is refused atomically on MongoDB and FerretDB alike, so the count is exact
 * where `$inc` would lose updates (FerretDB).
 *
 * Cost per request, in database commands: the first request of a key in a window on an instance
 * reads the key's highest slot (on MongoDB an `_id` index seek), then inserts the next ones; later
 * requests insert only, the process counting on from what it read. An insert claims `chunk`
 * slots ahead (RATE_LIMIT_CHUNK, at most a sixteenth of the limit): its documents are real slots,
 * so other instances count them, and the requests that follow take the slots left without a
 * command until they run out, so one insert admits `chunk` requests. The limit is never exceeded;
 * when a window ends an instance may leave at most `chunk` − 1 of its slots unused. Requests of
 * one key that arrive while an insert of it runs are claimed together in the next one (group
 * commit: the slots after the last, in one ordered insert), so N concurrent requests cost about
 * one command.
 * When another instance took a slot an insert tried, the insert is refused (the slots before it
 * are this instance's, the ones after it were not tried), and from then on the instance reads
 * before each insert for the rest of that window, one request at a time (2 commands). A request
 * over the limit writes nothing: it costs no command once the instance knows the window is full,
 * else one read.
 * Ended windows are deleted once per window per instance with one `_id` range (no TTL index).
 */
export class MongoFixedWindowThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly windows = new Map<string, KeyWindow>();
  /** Start of the last window this process swept for, so it sweeps once per window. */
  private sweptForWindow = -1;
  /**
   * The concurrent requests of one key's window in this process, claimed together (claimBatch);
   * each item is the limit of its request. Keyed by the window itself: a request of a new window
   * never joins the claims of the one before it.
   */
  private readonly claims = new KeyedGroupCommits<KeyWindow, number, number | null | Alone>(
    (window, limits) => this.claimBatch(window, limits[0] as number, limits.length),
    { max: BATCH_MAX, failsQueued: isDatabaseUnavailable },
  );

  /**
   * `hits` is a function: the connection's database is there only once it is open. `chunk`: the
   * slots one insert claims ahead (1: one per request).
   */
  constructor(
    private readonly hits: () => Collection<RateLimitHit>,
    private readonly chunk = 1,
  ) {}

  /** The store in the database of a mongoose connection. */
  static on(connection: Connection, chunk = 1): MongoFixedWindowThrottlerStorage {
    return new MongoFixedWindowThrottlerStorage(() => {
      const db = connection.db;
      if (!db) throw new Error('database connection is not open');
      return db.collection<RateLimitHit>(RATE_LIMIT_COLLECTION);
    }, chunk);
  }

  async increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    const now = Date.now();
    const window = fixedWindow(now, ttl);
    this.sweepOnce(window.start, ttl);
    const keyWindow = this.windowOf(key, window.start);
    const claimed =
      keyWindow.takeReserved() ??
      (keyWindow.contended ? ALONE : await this.claims.add(keyWindow, limit));
    const slot = claimed === ALONE ? await claimSlot(this.space(keyWindow, limit), limit) : claimed;
    const timeToExpire = secondsUntil(window.end, now);
    if (slot === null)
      return {
        totalHits: limit + 1,
        timeToExpire,
        isBlocked: true,
        timeToBlockExpire: timeToExpire,
      };
    return { totalHits: slot + 1, timeToExpire, isBlocked: false, timeToBlockExpire: 0 };
  }

  /**
   * The next `count` slots for as many concurrent requests, and up to the chunk ahead, in one
   * ordered insert: a slot for each request that fits below the limit (null for the others), the
   * slots beyond them kept for the next requests. If another instance took one of them, the ones
   * inserted before it are this instance's, and the requests left claim alone.
   */
  private async claimBatch(
    window: KeyWindow,
    limit: number,
    count: number,
  ): Promise<(number | null | Alone)[]> {
    // Requests queued while the last insert ran take what it claimed ahead first.
    const reserved: number[] = [];
    while (reserved.length < count) {
      const slot = window.takeReserved();
      if (slot === undefined) break;
      reserved.push(slot);
    }
    if (reserved.length === count) return reserved;
    return [...reserved, ...(await this.claimNew(window, limit, count - reserved.length))];
  }

  private async claimNew(
    window: KeyWindow,
    limit: number,
    count: number,
  ): Promise<(number | null | Alone)[]> {
    if (window.contended) return Array.from({ length: count }, () => ALONE);
    if (window.next < limit && !window.known) await this.readNext(window);
    const first = window.next;
    const ahead = Math.max(count, Math.min(this.chunk, Math.floor(limit / 16)));
    const placed = Math.max(0, Math.min(ahead, limit - first));
    const results: (number | null | Alone)[] = Array.from({ length: count }, () => null);
    if (placed === 0) return results;
    window.next = first + placed;
    const docs = Array.from({ length: placed }, (_, i) => ({
      _id: hitId(window.start, window.key, first + i),
    }));
    let inserted: number;
    try {
      ({ inserted } = await insertInOrder(this.hits(), docs));
    } catch (error) {
      // The slots may be free still: the next requests of this process try them again.
      window.next = Math.min(window.next, first);
      throw error;
    }
    if (inserted < placed) {
      window.contended = true;
      window.next = first + inserted + 1;
    }
    for (let i = 0; i < Math.min(count, placed); i++) results[i] = i < inserted ? first + i : ALONE;
    if (inserted > count) {
      window.reservedFrom = first + count;
      window.reservedTo = first + inserted;
    }
    return results;
  }

  private space(window: KeyWindow, limit: number): SlotSpace<number> {
    return {
      firstFree: async (refused) => {
        if (refused !== null) {
          window.contended = true;
          window.next = Math.max(window.next, refused + 1);
        }
        if (window.next < limit && (!window.known || window.contended)) await this.readNext(window);
        // Reserved for this request: concurrent requests of this process never try one slot twice.
        const slot = window.next;
        window.next += 1;
        return slot;
      },
      take: (slot) => this.insert(window, slot),
    };
  }

  private async insert(window: KeyWindow, slot: number): Promise<number | Duplicate> {
    try {
      const inserted = await orDuplicate(() =>
        this.hits().insertOne({ _id: hitId(window.start, window.key, slot) }),
      );
      return inserted === DUPLICATE ? DUPLICATE : slot;
    } catch (error) {
      // The slot may be free still: the next request of this process tries it again.
      window.next = Math.min(window.next, slot);
      throw error;
    }
  }

  /** Moves `next` past the highest slot taken in the database; one read for concurrent callers. */
  private readNext(window: KeyWindow): Promise<void> {
    window.reading ??= this.highestSlot(window.key, window.start)
      .then((highest) => {
        window.next = Math.max(window.next, highest + 1);
        window.known = true;
      })
      .finally(() => {
        window.reading = undefined;
      });
    return window.reading;
  }

  /** The highest slot taken for the key in the window, -1 when none. */
  private async highestSlot(key: string, windowStart: number): Promise<number> {
    const { from, to } = hitRange(windowStart, key);
    const last = await this.hits().findOne(
      { _id: { $gte: from, $lt: to } },
      { sort: { _id: -1 }, projection: { _id: 1 } },
    );
    return last ? Number(last._id.slice(-SLOT_DIGITS)) : -1;
  }

  /** This process's view of the key's window; a request from an ended window gets a fresh one. */
  private windowOf(key: string, start: number): KeyWindow {
    const current = this.windows.get(key);
    if (current?.start === start) return current;
    if (current && current.start > start) return new KeyWindow(key, start);
    if (!current && this.windows.size >= REMEMBERED_KEYS) this.forgetBefore(start);
    const window = new KeyWindow(key, start);
    this.windows.set(key, window);
    return window;
  }

  /** Forgets keys of ended windows; all of them when that is not enough (they are only hints). */
  private forgetBefore(start: number): void {
    for (const [key, window] of this.windows) {
      if (window.start < start) this.windows.delete(key);
    }
    if (this.windows.size >= REMEMBERED_KEYS) this.windows.clear();
  }

  /**
   * Deletes windows that ended before the previous one, once per window per process, off the
   * request's path. The previous window is kept as a margin for clocks of instances that differ.
   */
  private sweepOnce(windowStart: number, ttl: number): void {
    if (windowStart <= this.sweptForWindow) return;
    this.sweptForWindow = windowStart;
    this.hits()
      .deleteMany({ _id: { $lt: windowPrefix(windowStart - ttl) } })
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'could not delete ended rate-limit windows');
      });
  }
}
