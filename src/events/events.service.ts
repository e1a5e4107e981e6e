import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { QueryFilter } from 'mongoose';
import { credentialIdOf, tenantOf, type CustomerPrincipal, type Tenant } from '../auth';
import type { Namespace } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { EventAppender } from './event-appender';
import { EventHub, type EventWaiter } from './event-hub';
import { EventIntentLog } from './event-intent-log';
import { EventIntentsRepository, type IntentRef } from './event-intents.repository';
import { OpenFeedChange, UNRECORDED_CHANGE, type FeedChange } from './feed-change';
import type { PlannedChange } from './event-intent.schema';
import {
  namespaceIn,
  namespaceOfPrincipal,
  queryFilter,
  visibleTo,
  type ChangeScope,
  type EventQuery,
  type FeedEvent,
  type RecordedChange,
  type ResourceLookup,
} from './event-scope';
import { TenantContentGate } from '../placement';
import { TenantLimits } from '../plans';
import { EventSweep } from './event-sweep';
import { FeedCollections } from './feed-collections';
import type { TailReader } from './namespace-tail';
import { EventTails } from './event-tails';
import type { EventDocument, EventResource } from './event.schema';
import { CursorExpiredError } from './events.errors';
import { EventsRepository } from './events.repository';
import { StreamSlots } from './stream-slots';
import type { LiveFilter, LiveFilterCompiler } from './live-filter';
import { eventAccessOf, type EventAccess } from './event-access';
import type { ItemAccessSource } from './item-access';

/**
 * The change feed of every namespace (docs/events.md). A write begins its change (`begin`: its
 * intent is inserted first), then runs, then commits: its events are appended and the intent
 * deleted (`record` does the three for a write given as a function).
 * A process that dies in between leaves the intent, and the reconciler (every instance, every
 * EVENTS_SWEEP_MS) records what the database shows happened once the intent is older than
 * EVENTS_INTENT_GRACE_MS. So every acknowledged change has its event — at least once.
 */
@Injectable()
export class EventsService implements OnModuleDestroy {
  private readonly logger = new Logger('Events');
  /** Open streams and long polls, ended when the module stops (they would hold the server). */
  private readonly open = new Set<() => void>();
  readonly enabled: boolean;
  readonly heartbeatMs: number;
  private readonly perPublishableKey: number;
  readonly streamBufferBytes: number;
  private liveFilters: LiveFilterCompiler | null = null;
  private itemAccess: ItemAccessSource | null = null;

  constructor(
    private readonly events: EventsRepository,
    private readonly intents: EventIntentsRepository,
    private readonly intentLog: EventIntentLog,
    private readonly appender: EventAppender,
    private readonly hub: EventHub,
    private readonly tails: EventTails,
    private readonly sweeper: EventSweep,
    private readonly gate: TenantContentGate,
    private readonly feeds: FeedCollections,
    /** Streams and waiting long polls held open, per key and in all (EVENTS_MAX_STREAMS*). */
    readonly slots: StreamSlots,
    private readonly limits: TenantLimits,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.perPublishableKey = config.events.maxStreamsPerPublishableKey;
    this.enabled = config.events.enabled;
    this.heartbeatMs = config.events.heartbeatMs;
    this.streamBufferBytes = config.events.streamBufferBytes;
  }

  /**
   * Calls `listener` after every append through this instance (its events are in the feed), so
   * work that follows the feed (webhook rounds) need not poll while nothing is written.
   */
  onAppend(listener: () => void): void {
    this.hub.onAppend(listener);
  }

  /**
   * Takes one of the principal's stream slots before any other work of the stream: a key holds at
   * most its tenant's `streamsPerKey` (TenantLimits answers from memory), a publishable key
   * EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY, over every instance (StreamSlots: a read and an insert
   * of the key's slots); TOO_MANY_STREAMS beyond. Returns the release; `onLost` ends the stream if
   * its slot is taken away (its lease ran out unrenewed).
   */
  async takeStreamSlot(principal: CustomerPrincipal, onLost?: () => void): Promise<() => void> {
    const keyId = credentialIdOf(principal);
    if (principal.kind === 'publishable')
      return this.slots.take(
        keyId,
        { max: this.perPublishableKey, holder: 'publishable key' },
        onLost,
      );
    const { limits } = await this.limits.of(tenantOf(principal));
    return this.slots.take(keyId, { max: limits.streamsPerKey, holder: 'key' }, onLost);
  }

  onModuleDestroy(): void {
    for (const end of [...this.open]) end();
  }

  /** Calls `end` when the module stops; returns the unregister. */
  whileOpen(end: () => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }

  /** The module that owns items' query language compiles live queries' filters. */
  registerLiveFilters(compiler: LiveFilterCompiler): void {
    this.liveFilters = compiler;
  }

  /** A live query's `filter[…]` and `fields` parameters, compiled (400 when wrong). */
  liveFilter(params: Record<string, unknown>): LiveFilter {
    if (!this.liveFilters) throw new Error('no live filter compiler registered');
    return this.liveFilters(params);
  }

  /** The module that owns items' access rules tells the feed what a caller may read of them. */
  registerItemAccess(source: ItemAccessSource): void {
    this.itemAccess = source;
  }

  /**
   * How a reader judges item events by their collections' access rules (null: a root or team
   * key, which they do not limit); `collection`: the one it follows.
   */
  accessFor(principal: CustomerPrincipal, collection?: string): EventAccess | null {
    return eventAccessOf(principal, this.itemAccess, collection);
  }

  /** The module that owns `resource` tells the reconciler what exists. */
  registerLookup(resource: EventResource, lookup: ResourceLookup): void {
    this.sweeper.registerLookup(resource, lookup);
  }

  /**
   * Begins a write's changes: passes the tenant-content gate (FEED_MOVING while the tenant's feed
   * is paused) and records the intent, before the write is sent. The caller then writes and
   * settles the change (FeedChange: `commit` with the changes made, `abandon`, or `failed`).
   * Throws — and nothing is recorded, the gate is left — when either step fails: the write must
   * not be sent then.
   */
  async begin(scope: ChangeScope, planned: PlannedChange[]): Promise<FeedChange> {
    if (!this.enabled || planned.length === 0) return UNRECORDED_CHANGE;
    const marker = await this.gate.enter(scope.tenant);
    let intent: IntentRef;
    try {
      intent = await this.intentLog.open(scope, planned);
    } catch (error) {
      await this.gate.leave(marker);
      throw error;
    }
    return new OpenFeedChange(intent, {
      append: (changes, id) => this.append(scope, changes, id),
      close: (ref) => this.intentLog.close(ref),
      discard: (ref) => this.intentLog.discard(ref),
      leave: () => this.gate.leave(marker),
      logger: this.logger,
    });
  }

  /**
   * Runs a write with its events (begin, `write`, then commit the changes `outcome` names). A
   * write refused by a rule (a DomainError) changed nothing and leaves no intent; any other
   * failure leaves it to the reconciler.
   */
  async record<T>(
    scope: ChangeScope,
    planned: PlannedChange[],
    write: () => Promise<T>,
    outcome: (result: T) => RecordedChange[],
  ): Promise<T> {
    const change = await this.begin(scope, planned);
    let result: T;
    try {
      result = await write();
    } catch (error) {
      await change.failed(error);
      throw error;
    }
    await change.commit(() => outcome(result));
    return result;
  }

  /**
   * Appends the changes of the write of `intent`, or changes that need no intent (the change is
   * its own record, e.g. a drop's tombstone).
   */
  async append(scope: ChangeScope, changes: RecordedChange[], intent?: string): Promise<void> {
    if (!this.enabled || changes.length === 0) return;
    await this.appender.append(scope, changes, intent);
  }

  /** The newest event number of a namespace; 0 before its first event. */
  latest(tenant: Tenant, branch: string): Promise<number> {
    return this.events.newestSeq(namespaceIn({ tenant, branch }));
  }

  /**
   * The events after `query.after` that the database selects for the principal, in order, at
   * most `query.limit`; `access` (accessFor) then judges the item events by their collections'
   * rules, loaded here for them. A cursor older than the oldest kept event (retention deleted
   * some after it) → 410: the reader must resync.
   */
  async read(
    principal: CustomerPrincipal,
    query: EventQuery,
    access: EventAccess | null,
  ): Promise<FeedEvent[]> {
    await access?.prepareRead();
    const visible = visibleTo(principal, query, access?.wider);
    const events = await this.readIn(namespaceOfPrincipal(principal), query, visible);
    await access?.prepare(events);
    return events;
  }

  /** The events of a namespace after `query.after` (a webhook reads all of them). */
  readNamespace(tenant: Tenant, branch: string, query: EventQuery): Promise<FeedEvent[]> {
    return this.readIn(namespaceIn({ tenant, branch }), query, {});
  }

  /**
   * Where a stream opening with cursor `after` (undefined: from now) starts: the newest event
   * number, or `after` once retention has been checked (410 when older than what is kept). Its
   * reads wait their turn among the feed reads of streams and long polls.
   */
  openStream(principal: CustomerPrincipal, after: number | undefined): Promise<number> {
    const namespace = namespaceOfPrincipal(principal);
    if (after === undefined) return this.tails.newestForOpening(namespace);
    return this.tails.inTurn(async () => {
      await this.checkCursor(namespace, after);
      return after;
    });
  }

  /** `read` for a stream or a waiting long poll: in turn among the feed reads. */
  readForStream(
    principal: CustomerPrincipal,
    query: EventQuery,
    access: EventAccess | null,
  ): Promise<FeedEvent[]> {
    return this.tails.inTurn(() => this.read(principal, query, access));
  }

  /** `latest` for a waiting long poll: in turn among the feed reads. */
  latestForStream(principal: CustomerPrincipal): Promise<number> {
    return this.tails.inTurn(() => this.events.newestSeq(namespaceOfPrincipal(principal)));
  }

  /**
   * Follows the principal's namespace: `reader` is handed its events from its `scanned` on,
   * through the namespace's tail (see EventTails.follow).
   */
  follow(
    principal: CustomerPrincipal,
    reader: TailReader,
    fromNow = false,
  ): { stop: () => void; wake: () => void } {
    return this.tails.follow(namespaceOfPrincipal(principal), reader, fromNow);
  }

  /** Wakes `waiter` when the principal's namespace may have events beyond `waiter.seen`. */
  subscribe(principal: CustomerPrincipal, waiter: EventWaiter): () => void {
    return this.hub.subscribe(namespaceOfPrincipal(principal), waiter);
  }

  /** Deletes a tenant's events and intents in every branch (an erasure). */
  async eraseTenant(tenant: Tenant): Promise<void> {
    await this.feeds.deleteTenantEverywhere(tenant);
  }

  /** One sweep now: reconcile abandoned intents, then apply retention. */
  sweep(): Promise<void> {
    return this.sweeper.runNow();
  }

  private async readIn(
    namespace: Namespace,
    query: EventQuery,
    visible: QueryFilter<EventDocument>,
  ): Promise<FeedEvent[]> {
    if (query.checkExpiry !== false) await this.checkCursor(namespace, query.after);
    return this.events.findInRange(namespace, query, { ...queryFilter(query), ...visible });
  }

  /** 410 when `after` is older than the oldest event the namespace keeps. */
  private async checkCursor(namespace: Namespace, after: number): Promise<void> {
    if (after === 0) return;
    const oldest = await this.events.oldestSeq(namespace);
    if (oldest !== undefined && oldest > after + 1) throw new CursorExpiredError(after);
  }
}
