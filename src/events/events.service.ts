import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model, type QueryFilter } from 'mongoose';
import { tenantOf, type CustomerPrincipal, type Tenant } from '../auth';
import { DomainError, isDatabaseUnavailable } from '../common/errors';
import { GroupCommit } from '../common/batching/group-commit';
import { RepeatingTask } from '../common/scheduling/repeating-task';
import { Semaphore } from '../common/scheduling/semaphore';
import { APP_CONFIG, type AppConfig } from '../config';
import { EventAppender } from './event-appender';
import { EventHub, type EventWaiter } from './event-hub';
import { NamespaceTail, type TailReader } from './event-tail';
import { EventSweep } from './event-sweep';
import { EventIntentDocument, type PlannedChange } from './event-intent.schema';
import {
  namespaceFilter,
  namespaceKey,
  queryFilter,
  visibleTo,
  type ChangeScope,
  type EventQuery,
  type FeedEvent,
  type RecordedChange,
  type ResourceLookup,
} from './event-scope';
import { EventDocument, type EventResource } from './event.schema';
import { CursorExpiredError } from './events.errors';
import { StreamSlots } from './stream-slots';

/**
 * Reads made for streams and waiting long polls that run at once: opening (the cursor and
 * retention checks), catching up, the tails' shared reads and the long polls' reads. 200 streams
 * opening together then hold 4 of the database pool's connections (100 by default), not all of
 * them, and writes keep theirs; the others wait their turn (on FerretDB, which scans for every
 * read, more at once would not finish sooner).
 */
export const FEED_READS_AT_ONCE = 4;

/**
 * The change feed of every namespace (docs/events.md). A write goes through `record`: its intent
 * is inserted first, then the write runs, then its events are appended and the intent deleted.
 * A process that dies in between leaves the intent, and the reconciler (every instance, every
 * EVENTS_SWEEP_MS) records what the database shows happened once the intent is older than
 * EVENTS_INTENT_GRACE_MS. So every acknowledged change has its event — at least once.
 */
@Injectable()
export class EventsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Events');
  private readonly lookups = new Map<EventResource, ResourceLookup>();
  private readonly appender: EventAppender;
  /** Intents are inserted and deleted in batches too. */
  private readonly intentInserts: GroupCommit<Record<string, unknown>>;
  private readonly intentDeletes: GroupCommit<Types.ObjectId>;
  /** namespace → the shared read of the streams that follow it. */
  private readonly tails = new Map<string, { tail: NamespaceTail; unsubscribe: () => void }>();
  /** Reads of a namespace's newest event number for streams opening now, one per namespace. */
  private readonly openingReads = new Map<string, Promise<number>>();
  /** Open streams and long polls, ended when the module stops (they would hold the server). */
  private readonly open = new Set<() => void>();
  private readonly hub: EventHub;
  private readonly sweeper: RepeatingTask;
  private readonly feedReads = new Semaphore(FEED_READS_AT_ONCE);
  /** Streams and waiting long polls held open, per key and in all (EVENTS_MAX_STREAMS*). */
  readonly slots: StreamSlots;
  readonly enabled: boolean;
  readonly heartbeatMs: number;
  readonly streamBufferBytes: number;

  constructor(
    @InjectModel(EventDocument.name) private readonly events: Model<EventDocument>,
    @InjectModel(EventIntentDocument.name) private readonly intents: Model<EventIntentDocument>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.enabled = config.events.enabled;
    this.appender = new EventAppender(this.events.collection, (tenant, branch) =>
      this.latest(tenant, branch),
    );
    this.heartbeatMs = config.events.heartbeatMs;
    this.streamBufferBytes = config.events.streamBufferBytes;
    this.slots = new StreamSlots({
      perKey: config.events.maxStreamsPerKey,
      total: config.events.maxStreams,
    });
    const failsQueued = isDatabaseUnavailable;
    this.intentInserts = new GroupCommit<Record<string, unknown>>(
      async (docs) => {
        await this.intents.collection.insertMany(docs, { ordered: false });
        return docs.map((): void => undefined);
      },
      { failsQueued },
    );
    this.intentDeletes = new GroupCommit<Types.ObjectId>(
      async (ids) => {
        await this.intents.collection.deleteMany({ _id: { $in: ids } });
        return ids.map((): void => undefined);
      },
      { failsQueued },
    );
    this.hub = new EventHub(config.events.pollMs, (namespace) => {
      const [kind, id, branch] = namespace.split('\u0000') as ['user' | 'team', string, string];
      return this.latest({ kind, id }, branch);
    });
    const sweep = new EventSweep(this.events, this.intents, config.events, {
      append: (scope, changes) => this.append(scope, changes),
      latest: (tenant, branch) => this.latest(tenant, branch),
      lookup: (resource) => this.lookups.get(resource),
    });
    this.sweeper = new RepeatingTask(
      config.events.sweepMs,
      () => sweep.run(),
      (error) => this.logger.warn({ err: error }, 'could not sweep the event feed'),
    );
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.hub.start();
    this.sweeper.start();
  }

  async onModuleDestroy(): Promise<void> {
    for (const end of [...this.open]) end();
    await this.hub.stop();
    await this.sweeper.stop();
  }

  /** Calls `end` when the module stops; returns the unregister. */
  whileOpen(end: () => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }

  /** The module that owns `resource` tells the reconciler what exists. */
  registerLookup(resource: EventResource, lookup: ResourceLookup): void {
    this.lookups.set(resource, lookup);
  }

  /**
   * Runs a write with its events: the intent first, then `write`, then the events `outcome`
   * names. A write refused by a rule (a DomainError) changed nothing and leaves no intent; any
   * other failure leaves it to the reconciler. Once the write succeeded its answer stands: if
   * the events cannot be appended now, the reconciler appends them.
   */
  async record<T>(
    scope: ChangeScope,
    planned: PlannedChange[],
    write: () => Promise<T>,
    outcome: (result: T) => RecordedChange[],
  ): Promise<T> {
    if (!this.enabled || planned.length === 0) return write();
    // The driver's collection, not a mongoose document: this runs on every write, and a model's
    // casting and hooks cost more CPU than the insert itself (bench: change feed comparison).
    // Concurrent writes insert their intents together (and delete them together below).
    const intent = { _id: new Types.ObjectId() };
    await this.intentInserts.add({
      ...intent,
      ...namespaceFilter(scope.tenant, scope.branch),
      actor: scope.actor,
      changes: planned,
      createdAt: new Date(),
    });
    let result: T;
    try {
      result = await write();
    } catch (error) {
      if (error instanceof DomainError)
        await this.intents
          .deleteOne({ _id: intent._id })
          .exec()
          .catch(() => undefined);
      throw error;
    }
    try {
      await this.append(scope, outcome(result));
      await this.intentDeletes.add(intent._id);
    } catch (error) {
      this.logger.warn({ err: error }, 'events left to the reconciler');
    }
    return result;
  }

  /** Appends changes that need no intent (the change is its own record, e.g. a drop's tombstone). */
  async append(scope: ChangeScope, changes: RecordedChange[]): Promise<void> {
    if (!this.enabled || changes.length === 0) return;
    const latest = await this.appender.append(scope, changes);
    this.hub.notify(namespaceKey(scope.tenant, scope.branch), latest);
  }

  /** The newest event number of a namespace; 0 before its first event. */
  async latest(tenant: Tenant, branch: string): Promise<number> {
    const newest = await this.events.collection.findOne<{ seq: number }>(
      namespaceFilter(tenant, branch),
      { sort: { seq: -1 }, projection: { seq: 1 } },
    );
    return newest?.seq ?? 0;
  }

  /**
   * The events after `query.after` that the principal may see, in order. A cursor older than
   * the oldest kept event (retention deleted some after it) → 410: the reader must resync.
   */
  async read(principal: CustomerPrincipal, query: EventQuery): Promise<FeedEvent[]> {
    return this.readNamespace(tenantOf(principal), principal.branch, query, visibleTo(principal));
  }

  /** The events of a namespace after `query.after` (a webhook reads all of them). */
  async readNamespace(
    tenant: Tenant,
    branch: string,
    query: EventQuery,
    visible: QueryFilter<EventDocument> = {},
  ): Promise<FeedEvent[]> {
    const ns = namespaceFilter(tenant, branch);
    if (query.checkExpiry !== false) await this.checkCursor(tenant, branch, query.after);
    const filter: QueryFilter<EventDocument> = {
      ...ns,
      seq: { $gt: query.after, ...(query.through !== undefined ? { $lte: query.through } : {}) },
      ...queryFilter(query),
      ...visible,
    };
    const docs = await this.events
      .find(filter)
      .sort({ seq: 1 })
      .limit(query.limit)
      .lean<EventDocument[]>()
      .exec();
    return docs.map((doc) => ({
      seq: doc.seq,
      type: doc.type,
      resource: doc.resource,
      ...(doc.collection !== undefined ? { collection: doc.collection } : {}),
      key: doc.key,
      branch: doc.branch,
      at: doc.at,
      actor: doc.actor,
      owner: doc.owner,
      data: doc.data,
    }));
  }

  /**
   * Where a stream opening with cursor `after` (undefined: from now) starts: the newest event
   * number, or `after` once retention has been checked (410 when older than what is kept). Its
   * reads wait their turn among the feed reads of streams and long polls.
   */
  openStream(principal: CustomerPrincipal, after: number | undefined): Promise<number> {
    const tenant = tenantOf(principal);
    if (after === undefined) return this.newestForOpening(tenant, principal.branch);
    return this.feedReads.run(async () => {
      await this.checkCursor(tenant, principal.branch, after);
      return after;
    });
  }

  /**
   * Where a stream opening "from now" starts, at bounded cost however many open at once: the
   * position of the namespace's tail when this instance already follows it (no read: the tail
   * hands the new stream every event after it), else one read of the newest number shared by
   * every stream of the namespace opening meanwhile.
   */
  private newestForOpening(tenant: Tenant, branch: string): Promise<number> {
    const key = namespaceKey(tenant, branch);
    const position = this.tails.get(key)?.tail.position;
    if (position !== undefined && position !== null) return Promise.resolve(position);
    let read = this.openingReads.get(key);
    if (!read) {
      read = this.feedReads
        .run(() => this.latest(tenant, branch))
        .finally(() => this.openingReads.delete(key));
      this.openingReads.set(key, read);
    }
    return read;
  }

  /** `read` for a stream or a waiting long poll: in turn among the feed reads. */
  readForStream(principal: CustomerPrincipal, query: EventQuery): Promise<FeedEvent[]> {
    return this.feedReads.run(() => this.read(principal, query));
  }

  /** `latest` for a waiting long poll: in turn among the feed reads. */
  latestForStream(principal: CustomerPrincipal): Promise<number> {
    return this.feedReads.run(() => this.latest(tenantOf(principal), principal.branch));
  }

  /** 410 when `after` is older than the oldest event the namespace keeps. */
  async checkCursor(tenant: Tenant, branch: string, after: number): Promise<void> {
    if (after === 0) return;
    const [oldest] = await this.events
      .find(namespaceFilter(tenant, branch))
      .sort({ seq: 1 })
      .limit(1)
      .select({ seq: 1 })
      .lean<{ seq: number }[]>()
      .exec();
    if (oldest && oldest.seq > after + 1) throw new CursorExpiredError(after);
  }

  /**
   * Follows the principal's namespace: `reader` is handed its events from its `scanned` on,
   * through the namespace's tail (one read of the feed per change for all its streams).
   * Returns the unfollow, and the wake of a reader that paused and can take more. `fromNow`:
   * the reader's `scanned` is where the feed stood when it opened (no cursor), which a new tail
   * starts from instead of reading it again.
   */
  follow(
    principal: CustomerPrincipal,
    reader: TailReader,
    fromNow = false,
  ): { stop: () => void; wake: () => void } {
    const tenant = tenantOf(principal);
    const key = namespaceKey(tenant, principal.branch);
    let followed = this.tails.get(key);
    if (!followed) {
      const tail = new NamespaceTail(
        {
          latest: () => this.feedReads.run(() => this.latest(tenant, principal.branch)),
          readAll: (after, limit) =>
            this.feedReads.run(() =>
              this.readNamespace(tenant, principal.branch, { after, limit, checkExpiry: false }),
            ),
        },
        (error) => this.logger.warn({ err: error }, 'could not read the event feed for streams'),
        fromNow ? reader.scanned : null,
      );
      const unsubscribe = this.hub.subscribe(key, {
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

  /** Wakes `waiter` when the principal's namespace may have events beyond `waiter.seen`. */
  subscribe(principal: CustomerPrincipal, waiter: EventWaiter): () => void {
    return this.hub.subscribe(namespaceKey(tenantOf(principal), principal.branch), waiter);
  }

  /** Deletes a tenant's events and intents in every branch (an erasure). */
  async eraseTenant(tenant: Tenant): Promise<void> {
    const filter = { tenantKind: tenant.kind, tenant: tenant.id };
    await this.intents.deleteMany(filter).exec();
    await this.events.deleteMany(filter).exec();
  }

  /** One sweep now: reconcile abandoned intents, then apply retention. */
  sweep(): Promise<void> {
    return this.sweeper.runNow();
  }
}
