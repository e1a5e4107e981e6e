import type { FeedEvent } from './event-scope';

/** Events read per round, by the tail and by a reader catching up. */
export const TAIL_PAGE = 500;

/** One stream following a namespace's feed through its tail. */
export interface TailReader {
  /** The newest event number this reader has passed (sent, or not its to see). */
  scanned: number;
  /**
   * Loads what the reader needs to judge these events (its access rules), before `wants` is
   * asked of them; never rejects.
   */
  prepare(events: readonly FeedEvent[]): Promise<void>;
  /** Whether the reader is sent this event (its filters and its principal's visibility). */
  wants(event: FeedEvent): boolean;
  /** The events it wants in (after, through], oldest first, at most `limit` (its own query). */
  readOwn(after: number, through: number, limit: number): Promise<FeedEvent[]>;
  /** Events of a shared read: a reader that cannot take them all ends (it is too far behind). */
  send(events: FeedEvent[]): void;
  /**
   * Events of its own read: the reader takes the first ones it has room for and returns how many.
   * Fewer than all: it is `paused` until its client has read what it holds, then wakes the tail.
   */
  sendOwn(events: FeedEvent[]): number;
  /**
   * Called after a read, before what it read is handed over: resolves once the reader's rights
   * were confirmed after the read (it then takes the events), or once it ended because it lost
   * them (it then takes nothing). Never rejects.
   */
  confirm(): Promise<void>;
  /** Whether it waits for its client to read before it takes more (skipped by the tail). */
  readonly paused: boolean;
  /** Its own read failed: the reader ends (the client resumes with Last-Event-ID). */
  fail(error: unknown): void;
}

export interface TailSource {
  latest(): Promise<number>;
  /** Every event of the namespace after `after`, oldest first, at most `limit`. */
  readAll(after: number, limit: number): Promise<FeedEvent[]>;
}

/**
 * The streams of one namespace share one read of its feed per wake: the tail reads the events
 * beyond its position once and hands every reader the ones it wants, so 100 streams on a
 * namespace cost one query per change instead of 100. A reader that joins behind the tail (a
 * resume, or one that joined during a round) first reads its own events up to the tail's
 * position; from there it takes the shared pages. Rounds never overlap, so every reader gets
 * its events once and in order. A reader catching up takes only what its client has room for;
 * it then pauses (rounds pass it by) and wakes the tail when it can take more.
 */
export class NamespaceTail {
  private readonly readers = new Set<TailReader>();
  /**
   * Every reader at or beyond it has been handed every event up to here; null before the first
   * round has read where the feed stands.
   */
  private reached: number | null;
  private round: Promise<void> | null = null;
  private again = false;

  /**
   * `start`: where the feed stood when the first reader opened "from now" (read once for the
   * streams of the namespace opening together), so the tail need not read it again.
   */
  constructor(
    private readonly source: TailSource,
    private readonly onError: (error: unknown) => void,
    start: number | null = null,
  ) {
    this.reached = start;
  }

  /** Where the tail stands: a reader that joins here misses nothing (null: not read yet). */
  get position(): number | null {
    return this.reached;
  }

  /** The newest event number the tail has read (0 before its first round). */
  get seen(): number {
    return this.reached ?? 0;
  }

  get size(): number {
    return this.readers.size;
  }

  /**
   * A reader that joins exactly where the tail stands needs no round of its own: what follows
   * reaches it through the wake of the next change (so 10 streams opening on a namespace cost
   * one round, not 10). The first reader still runs one, to read what was appended before the
   * tail subscribed to wakes.
   */
  add(reader: TailReader): void {
    const first = this.readers.size === 0;
    this.readers.add(reader);
    if (first || this.reached === null || reader.scanned !== this.reached) this.wake();
  }

  remove(reader: TailReader): void {
    this.readers.delete(reader);
  }

  /** Runs a round; a wake during one runs one more after it. */
  wake(): void {
    if (this.round) {
      this.again = true;
      return;
    }
    this.round = (async () => {
      do {
        this.again = false;
        await this.run().catch(this.onError);
      } while (this.again && this.readers.size > 0);
    })().finally(() => {
      this.round = null;
    });
  }

  /** Resolves when the current round (if any) is over. */
  async settled(): Promise<void> {
    while (this.round) await this.round;
  }

  private async run(): Promise<void> {
    let position = this.reached ?? (await this.source.latest());
    this.reached = position;
    await Promise.all(
      [...this.readers]
        .filter((reader) => reader.scanned < position && !reader.paused)
        .map((reader) => this.catchUp(reader, position)),
    );
    for (;;) {
      const from = position;
      const page = await this.source.readAll(from, TAIL_PAGE);
      if (page.length === 0) return;
      const through: number = page.at(-1)?.seq ?? from;
      await Promise.all(
        [...this.readers]
          .filter((reader) => reader.scanned >= from && !reader.paused)
          .map((reader) => reader.prepare(page)),
      );
      // A reader still behind `from` joined during this round, or is paused: a later round
      // catches it up.
      const handed = [...this.readers].flatMap((reader) => {
        if (reader.scanned < from || reader.paused) return [];
        const wanted = page.filter((event) => event.seq > reader.scanned && reader.wants(event));
        reader.scanned = Math.max(reader.scanned, through);
        return wanted.length > 0 ? [{ reader, wanted }] : [];
      });
      // Nothing read goes to a reader whose rights are not confirmed after the read.
      await Promise.all(handed.map(({ reader }) => reader.confirm()));
      for (const { reader, wanted } of handed) if (this.readers.has(reader)) reader.send(wanted);
      position = through;
      this.reached = through;
      if (page.length < TAIL_PAGE) return;
    }
  }

  private async catchUp(reader: TailReader, through: number): Promise<void> {
    try {
      while (reader.scanned < through && this.readers.has(reader)) {
        const page = await reader.readOwn(reader.scanned, through, TAIL_PAGE);
        if (page.length > 0) await reader.confirm();
        if (!this.readers.has(reader)) return;
        const taken = page.length > 0 ? reader.sendOwn(page) : 0;
        if (taken < page.length) {
          // Paused: it goes on from its last event taken when it wakes the tail.
          reader.scanned = page[taken - 1]?.seq ?? reader.scanned;
          return;
        }
        reader.scanned = page.length < TAIL_PAGE ? through : (page.at(-1)?.seq ?? through);
      }
    } catch (error) {
      this.readers.delete(reader);
      reader.fail(error);
    }
  }
}
