import { TooManyStreamsError } from './events.errors';

/** The most streams one key may hold (null: no limit), and what kind of key it is. */
export interface PerKeyLimit {
  max: number | null;
  /** 'key': the tenant's `streamsPerKey`; 'publishable key': EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY. */
  holder: 'key' | 'publishable key';
}

/**
 * The streams and waiting long polls an instance holds, per API key and in all. Counted in this
 * process's memory, not the database: what they cost (a socket, buffers, polls) is this
 * instance's, and a slot is taken before any database work.
 */
export class StreamSlots {
  private total = 0;
  private readonly byKey = new Map<string, number>();

  constructor(private readonly limits: { total: number }) {}

  /** Slots taken now, over every key. */
  get open(): number {
    return this.total;
  }

  /**
   * Takes a slot for the key, held to `perKey` as the caller reads it now, or throws
   * TooManyStreamsError. Returns the release, which gives the slot back once however many times
   * it is called.
   */
  take(keyId: string, perKey: PerKeyLimit): () => void {
    const held = this.byKey.get(keyId) ?? 0;
    if (perKey.max !== null && held >= perKey.max)
      throw new TooManyStreamsError(perKey.holder, perKey.max);
    if (this.total >= this.limits.total)
      throw new TooManyStreamsError('instance', this.limits.total);
    this.byKey.set(keyId, held + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byKey.get(keyId) ?? 1) - 1;
      if (left > 0) this.byKey.set(keyId, left);
      else this.byKey.delete(keyId);
    };
  }
}
