import { Injectable } from '@nestjs/common';
import { KeyedGroupCommits } from '../common/batching/group-commit';
import { isDatabaseUnavailable } from '../common/errors';
import { namespaceKey, type Namespace } from '../common/tenancy/namespace';
import { namespaceIn, type ChangeScope, type RecordedChange } from './event-scope';
import { EventHub } from './event-hub';
import { EventsRepository, type NumberedChange } from './events.repository';

/** Namespaces whose newest event number an instance remembers. */
const HEADS_CACHED = 10_000;

/**
 * Refused numbers in a row after which an append reads the namespace's newest number instead of
 * trying the number after the refused one (each try is one insert the unique index answers).
 */
const REFUSALS_BEFORE_READ = 64;

/**
 * Appends events to the feed under the next numbers of their namespace, and wakes the readers
 * waiting for them. The events of concurrent writes on this instance go together (group commit
 * per namespace): one ordered insert under consecutive numbers, so they never refuse each
 * other's numbers.
 */
@Injectable()
export class EventAppender {
  /** namespace → the newest event number this instance appended. */
  private readonly heads = new Map<string, number>();
  /**
   * The appends of each namespace (by namespaceKey), one queue per namespace; `gather`, so that
   * the events of requests answered by one earlier command go in one append.
   */
  private readonly queues = new KeyedGroupCommits<string, NumberedChange, number>(
    (key, pending) => this.insert(key, namespaceIn(pending[0]!.scope), pending),
    { gather: true, failsQueued: isDatabaseUnavailable },
  );

  constructor(
    private readonly events: EventsRepository,
    private readonly hub: EventHub,
  ) {}

  /** Appends the changes in order (of the write of `intent`, if any) and wakes the readers. */
  async append(scope: ChangeScope, changes: RecordedChange[], intent?: string): Promise<void> {
    if (changes.length === 0) return;
    const namespace = namespaceIn(scope);
    const key = namespaceKey(namespace);
    const seqs = await Promise.all(
      changes.map((change) =>
        this.queues.add(key, { scope, change, ...(intent ? { intent } : {}) }),
      ),
    );
    this.hub.notify(namespace, Math.max(...seqs));
  }

  /**
   * Inserts the events of one namespace under the next numbers, in order (insertInOrder). The
   * number this instance last appended is the first guess (no read: on a database that scans, a
   * read costs as much as the feed is long). A number another instance took meanwhile refuses
   * its event (unique index); the ones before it went in, and the rest go again under the
   * numbers after the refused one, which is taken, so no gap opens. Only after REFUSALS_BEFORE_READ
   * refusals in a row is the newest number read: while another instance appends to the
   * namespace without pause, a read that scans took so long that its number was always taken
   * again by the time the insert came, and the append never ended. An event is inserted only
   * after the one numbered before it (ordered insert), so no reader ever sees a gap that fills
   * later.
   */
  private async insert(
    key: string,
    namespace: Namespace,
    pending: NumberedChange[],
  ): Promise<number[]> {
    const seqs: number[] = [];
    // The number the next insert follows: taken (appended, or refused as taken).
    let after = this.heads.get(key);
    let refusals = 0;
    while (seqs.length < pending.length) {
      if (after === undefined) after = await this.events.newestSeq(namespace);
      const next = after + 1;
      const rest = pending.slice(seqs.length);
      const inserted = await this.events.insertNumbered(namespace, next, rest);
      for (let i = 0; i < inserted; i++) seqs.push(next + i);
      if (inserted > 0) {
        if (this.heads.size >= HEADS_CACHED) this.heads.clear();
        this.heads.set(key, Math.max(this.heads.get(key) ?? 0, next + inserted - 1));
      }
      if (inserted === rest.length) break;
      // `next + inserted` is taken: the rest go after it, or after the newest number read now.
      refusals = inserted > 0 ? 1 : refusals + 1;
      after = refusals < REFUSALS_BEFORE_READ ? next + inserted : undefined;
      if (after === undefined) refusals = 0;
    }
    return seqs;
  }
}
