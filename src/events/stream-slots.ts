import { Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { KeyedLock } from '../common/mongo/keyed-lock';
import { TooManyStreamsError } from './events.errors';

/** The most streams one key may hold (null: no limit), and what kind of key it is. */
export interface PerKeyLimit {
  max: number | null;
  /** 'key': the tenant's `streamsPerKey`; 'publishable key': EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY. */
  holder: 'key' | 'publishable key';
}

/** Where the keys' slots are kept for every instance (StreamSlotsRepository). */
export interface StreamSlotStore {
  /** Inserts a slot of `key` below `max`, held until `leaseUntil`; its id, or null when none is free. */
  claim(key: string, max: number, leaseUntil: Date): Promise<string | null>;
  /** Moves the lease of the slots `ids` to `leaseUntil`; returns those that are gone. */
  renew(ids: readonly string[], leaseUntil: Date): Promise<string[]>;
  /** Deletes a slot. */
  release(id: string): Promise<void>;
}

export interface StreamSlotLimits {
  /** EVENTS_MAX_STREAMS: what this instance holds in all. */
  total: number;
  /** EVENTS_STREAM_LEASE_MS: how long a slot outlives its instance. */
  leaseMs: number;
}

/**
 * The streams and waiting long polls of the API keys, per key over every instance and in all on
 * this one.
 *
 * Per key in the database (the store): a slot under a unique index, claimed before the stream
 * does anything else and deleted when it ends, so a key holds at most its limit whatever the
 * instances its streams reach. Each slot is held under a lease that this instance renews (one
 * update for all its slots, every third of EVENTS_STREAM_LEASE_MS, only while it holds any): the
 * slots of an instance that died free themselves within the lease, the mechanism of the leases of
 * moves, erasures and search builds. A slot found gone at a renewal (the instance could not renew
 * it for a whole lease, and another claim took its place) ends its stream, through `onLost`.
 *
 * In all in this process's memory (EVENTS_MAX_STREAMS): what it guards is this instance's own —
 * its sockets, buffers and polling — and it is checked first, so a full instance refuses without
 * a database command. Claims of one key on one instance take turns (a read, then an insert), so
 * they do not collide with each other's inserts.
 */
export class StreamSlots implements BeforeApplicationShutdown {
  private readonly logger = new Logger('StreamSlots');
  private total = 0;
  /** This instance's slots in the store, with what ends their stream if one is lost. */
  private readonly held = new Map<string, () => void>();
  private readonly claims = new KeyedLock();
  /** Deletes under way: shutdown waits for them, so that a drain gives every slot back. */
  private readonly releasing = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private renewing = false;

  constructor(
    private readonly store: StreamSlotStore,
    private readonly limits: StreamSlotLimits,
  ) {}

  /** Slots taken now on this instance, over every key. */
  get open(): number {
    return this.total;
  }

  /**
   * Takes a slot for the key, held to `perKey` as the caller reads it now, or throws
   * TooManyStreamsError. Returns the release, which gives the slot back once however many times
   * it is called. `onLost` is called if the key's slot is found taken away (see the class).
   */
  async take(
    keyId: string,
    perKey: PerKeyLimit,
    onLost: () => void = () => undefined,
  ): Promise<() => void> {
    if (this.total >= this.limits.total)
      throw new TooManyStreamsError('instance', this.limits.total);
    const max = perKey.max;
    if (max === 0) throw new TooManyStreamsError(perKey.holder, max);
    // Counted before the claim's await: concurrent opens cannot pass the instance's total.
    this.total += 1;
    let id: string | null = null;
    if (max !== null) {
      try {
        id = await this.claims.run(keyId, () => this.store.claim(keyId, max, this.leaseFrom()));
      } catch (error) {
        this.total -= 1;
        throw error;
      }
      if (id === null) {
        this.total -= 1;
        throw new TooManyStreamsError(perKey.holder, max);
      }
      this.held.set(id, onLost);
      this.renewWhileHeld();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      if (id !== null && this.held.delete(id)) this.release(id);
      if (this.held.size === 0) this.stopRenewing();
    };
  }

  /** Waits for the slots given back to be deleted, before the database connection closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopRenewing();
    await Promise.all([...this.releasing]);
  }

  /** One renewal of every slot held now (the timer's tick; tests call it). */
  async renew(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    try {
      const lost = await this.store.renew([...this.held.keys()], this.leaseFrom());
      for (const id of lost) {
        const onLost = this.held.get(id);
        if (!onLost) continue;
        this.held.delete(id);
        this.logger.warn(
          { slot: id },
          'stream slot lost: its lease ran out unrenewed; the stream ends',
        );
        onLost();
      }
    } catch (error) {
      // Tried again at the next tick; a slot not renewed within its lease is lost then.
      this.logger.warn({ err: error }, 'stream slots not renewed');
    } finally {
      this.renewing = false;
    }
  }

  private leaseFrom(): Date {
    return new Date(Date.now() + this.limits.leaseMs);
  }

  private release(id: string): void {
    const deleting = this.store
      .release(id)
      // Not renewed any more: the slot frees itself when its lease runs out.
      .catch((error: unknown) =>
        this.logger.warn({ err: error, slot: id }, 'stream slot not deleted'),
      )
      .finally(() => this.releasing.delete(deleting));
    this.releasing.add(deleting);
  }

  private renewWhileHeld(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => void this.renew(),
      Math.max(1, Math.floor(this.limits.leaseMs / 3)),
    );
    this.timer.unref();
  }

  private stopRenewing(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
  }
}
