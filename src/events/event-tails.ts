import { Injectable, Logger } from '@nestjs/common';
import { Semaphore } from '../common/scheduling/semaphore';
import { namespaceKey, type Namespace } from '../common/tenancy/namespace';
import { EventHub } from './event-hub';
import { NamespaceTail, type TailReader } from './namespace-tail';
import { EventsRepository } from './events.repository';

/**
 * Reads made for streams and waiting long polls that run at once: opening (the cursor and
 * retention checks), catching up, the tails' shared reads and the long polls' reads. 200 streams
 * opening together then hold 4 of the database pool's connections (100 by default), not all of
 * them, and writes keep theirs; the others wait their turn (on FerretDB, which scans for every
 * read, more at once would not finish sooner).
 */
export const FEED_READS_AT_ONCE = 4;

/**
 * What streams and long polls read of the feed, at bounded cost however many are open: the one
 * tail per namespace that this instance's streams share, the shared read of where a namespace's
 * feed stands for streams opening together, and the turn every such read waits for.
 */
@Injectable()
export class EventTails {
  private readonly logger = new Logger('Events');
  /** namespace → the shared read of the streams that follow it. */
  private readonly tails = new Map<string, { tail: NamespaceTail; unsubscribe: () => void }>();
  /** Reads of a namespace's newest event number for streams opening now, one per namespace. */
  private readonly openingReads = new Map<string, Promise<number>>();
  private readonly feedReads = new Semaphore(FEED_READS_AT_ONCE);

  constructor(
    private readonly events: EventsRepository,
    private readonly hub: EventHub,
  ) {}

  /** Runs a read of a stream or a waiting long poll in turn among the feed reads. */
  inTurn<T>(read: () => Promise<T>): Promise<T> {
    return this.feedReads.run(read);
  }

  /**
   * Where a stream opening "from now" starts: the position of the namespace's tail when this
   * instance already follows it (no read: the tail hands the new stream every event after it),
   * else one read of the newest number shared by every stream of the namespace opening meanwhile.
   */
  newestForOpening(namespace: Namespace): Promise<number> {
    const key = namespaceKey(namespace);
    const position = this.tails.get(key)?.tail.position;
    if (position !== undefined && position !== null) return Promise.resolve(position);
    let read = this.openingReads.get(key);
    if (!read) {
      read = this.inTurn(() => this.events.newestSeq(namespace)).finally(() =>
        this.openingReads.delete(key),
      );
      this.openingReads.set(key, read);
    }
    return read;
  }

  /**
   * Follows a namespace: `reader` is handed its events from its `scanned` on, through the
   * namespace's tail (one read of the feed per change for all its streams). Returns the
   * unfollow, and the wake of a reader that paused and can take more. `fromNow`: the reader's
   * `scanned` is where the feed stood when it opened (no cursor), which a new tail starts from
   * instead of reading it again.
   */
  follow(
    namespace: Namespace,
    reader: TailReader,
    fromNow: boolean,
  ): { stop: () => void; wake: () => void } {
    const key = namespaceKey(namespace);
    let followed = this.tails.get(key);
    if (!followed) {
      const tail = new NamespaceTail(
        {
          latest: () => this.inTurn(() => this.events.newestSeq(namespace)),
          readAll: (after, limit) =>
            this.inTurn(() => this.events.findInRange(namespace, { after, limit }, {})),
        },
        (error) => this.logger.warn({ err: error }, 'could not read the event feed for streams'),
        fromNow ? reader.scanned : null,
      );
      const unsubscribe = this.hub.subscribe(namespace, {
        get seen() {
          return tail.seen;
        },
        wake: () => tail.wake(),
      });
      followed = { tail, unsubscribe };
      this.tails.set(key, followed);
    }
    const { tail, unsubscribe } = followed;
    tail.add(reader);
    const stop = (): void => {
      tail.remove(reader);
      if (tail.size > 0 || this.tails.get(key)?.tail !== tail) return;
      unsubscribe();
      this.tails.delete(key);
    };
    return { stop, wake: () => tail.wake() };
  }
}
