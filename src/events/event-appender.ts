import { Types, type mongo } from 'mongoose';
import type { Tenant } from '../auth';
import { GroupCommit } from '../common/batching/group-commit';
import { isDatabaseUnavailable } from '../common/errors';
import { insertedBeforeRefusal } from '../common/mongo/duplicate';
import {
  namespaceFilter,
  namespaceKey,
  type ChangeScope,
  type RecordedChange,
} from './event-scope';

/** Namespaces whose newest event number an instance remembers. */
const HEADS_CACHED = 10_000;

interface PendingEvent {
  scope: ChangeScope;
  change: RecordedChange;
}

/**
 * Appends events to the feed under the next numbers of their namespace. The events of concurrent
 * writes on this instance go together (group commit per namespace): one ordered insert under
 * consecutive numbers, so they never refuse each other's numbers.
 */
export class EventAppender {
  /** namespace → the newest event number this instance appended. */
  private readonly heads = new Map<string, number>();
  /** namespace → its queue of appends; dropped when it runs dry. */
  private readonly queues = new Map<string, GroupCommit<PendingEvent, number>>();

  constructor(
    private readonly events: mongo.Collection,
    private readonly latest: (tenant: Tenant, branch: string) => Promise<number>,
  ) {}

  /** Appends the changes in order; the newest number they took. */
  async append(scope: ChangeScope, changes: RecordedChange[]): Promise<number> {
    const key = namespaceKey(scope.tenant, scope.branch);
    let queue = this.queues.get(key);
    if (!queue) {
      const created: GroupCommit<PendingEvent, number> = new GroupCommit(
        (pending) => this.insert(key, pending),
        {
          onIdle: () => {
            if (this.queues.get(key) === created) this.queues.delete(key);
          },
          failsQueued: isDatabaseUnavailable,
        },
      );
      this.queues.set(key, created);
      queue = created;
    }
    const into = queue;
    const seqs = await Promise.all(changes.map((change) => into.add({ scope, change })));
    return Math.max(...seqs);
  }

  /**
   * Inserts the events of one namespace under the next numbers, in order, in one command. The
   * number this instance last appended is the first guess (no read: on a database that scans, a
   * read costs as much as the feed is long). A number another instance took meanwhile refuses
   * its event (unique index); the ones before it went in, and the rest go again after the
   * newest number, read then. An event is inserted only after the one numbered before it
   * (ordered insert), so no reader ever sees a gap that fills later.
   */
  private async insert(key: string, pending: PendingEvent[]): Promise<number[]> {
    const { tenant, branch } = pending[0]!.scope;
    const ns = namespaceFilter(tenant, branch);
    const seqs: number[] = [];
    let refused = false;
    while (seqs.length < pending.length) {
      const known = this.heads.get(key);
      const next =
        (!refused && known !== undefined ? known : await this.latest(tenant, branch)) + 1;
      const at = new Date();
      const docs = pending.slice(seqs.length).map(({ scope, change }, i) => ({
        _id: new Types.ObjectId(),
        ...ns,
        seq: next + i,
        type: change.type,
        resource: change.resource,
        ...(change.collection !== undefined ? { collection: change.collection } : {}),
        key: change.key,
        at,
        actor: scope.actor,
        owner: change.owner,
        data: change.data,
      }));
      let inserted = docs.length;
      try {
        await this.events.insertMany(docs, { ordered: true });
      } catch (error) {
        const before = insertedBeforeRefusal(error);
        if (before === null) throw error;
        inserted = before;
        refused = true;
      }
      seqs.push(...docs.slice(0, inserted).map((doc) => doc.seq));
      if (inserted > 0) {
        if (this.heads.size >= HEADS_CACHED) this.heads.clear();
        this.heads.set(key, Math.max(this.heads.get(key) ?? 0, next + inserted - 1));
      }
    }
    return seqs;
  }
}
