import { TooManyStreamsError } from './events.errors';

/**
 * The streams and waiting long polls an instance holds, per API key and in all. Counted in this
 * process's memory, not the database: what they cost (a socket, buffers, polls) is this
 * instance's, and a slot is taken before any database work.
 */
export class StreamSlots {
  private total = 0;
  private readonly byKey = new Map<string, number>();

  constructor(
    private readonly limits: {
      perKey: number;
      /** A publishable key's own number (EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY); absent: perKey. */
      perPublishableKey?: number;
      total: number;
    },
  ) {}

  /** Slots taken now, over every key. */
  get open(): number {
    return this.total;
  }

  /**
   * Takes a slot for the key (`publishable`: a publishable key, held to its own number), or
   * throws TooManyStreamsError. Returns the release, which gives the slot back once however many
   * times it is called.
   */
  take(keyId: string, publishable = false): () => void {
    const held = this.byKey.get(keyId) ?? 0;
    const perKey = publishable
      ? (this.limits.perPublishableKey ?? this.limits.perKey)
      : this.limits.perKey;
    if (held >= perKey)
      throw new TooManyStreamsError(publishable ? 'publishable key' : 'key', perKey);
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
