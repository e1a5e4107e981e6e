import { Inject, Injectable } from '@nestjs/common';
import { BackgroundTasks, type BackgroundTask } from '../common/scheduling/background-tasks';
import { APP_CONFIG, type AppConfig } from '../config';
import { EventAppender } from './event-appender';
import { EventIntentsRepository, type StoredIntent } from './event-intents.repository';
import { onEveryCluster } from '../placement';
import { FeedCollections } from './feed-collections';
import type { ChangeScope, RecordedChange, ResourceLookup } from './event-scope';
import type { EventResource } from './event.schema';
import { EventsRepository } from './events.repository';

/** Events and intents one sweep handles at most; the next sweep takes the rest. */
const SWEEP_BATCH = 500;

/**
 * The feed's background work, every EVENTS_SWEEP_MS on every instance (a background task): record
 * the events of writes whose writer died (intents older than EVENTS_INTENT_GRACE_MS), then delete
 * events past EVENTS_RETENTION_MS.
 */
@Injectable()
export class EventSweep {
  private readonly lookups = new Map<EventResource, ResourceLookup>();
  private readonly settings: AppConfig['events'];
  /** Absent when the feed is off: nothing is swept on a schedule then. */
  private readonly task: BackgroundTask;

  constructor(
    private readonly events: EventsRepository,
    private readonly intents: EventIntentsRepository,
    private readonly appender: EventAppender,
    private readonly feeds: FeedCollections,
    @Inject(APP_CONFIG) config: AppConfig,
    tasks: BackgroundTasks,
  ) {
    this.settings = config.events;
    this.task = tasks.register({
      name: 'events-sweep',
      intervalMs: config.events.sweepMs,
      run: () => this.run(),
      enabled: config.events.enabled,
    });
  }

  /** The module that owns `resource` tells the reconciler what exists. */
  registerLookup(resource: EventResource, lookup: ResourceLookup): void {
    this.lookups.set(resource, lookup);
  }

  /** One sweep now; a call while one runs joins it. */
  runNow(): Promise<void> {
    return this.task.runNow();
  }

  private async run(): Promise<void> {
    await this.reconcile();
    await this.expire();
  }

  private async reconcile(): Promise<void> {
    const before = new Date(Date.now() - this.settings.intentGraceMs);
    await onEveryCluster(this.feeds.every(), async (feed) => {
      for (const intent of await this.intents.findCreatedBefore(feed, before, SWEEP_BATCH)) {
        await this.reconcileOne(intent);
      }
    });
  }

  /** Records what the write of an abandoned intent did, then deletes the intent. */
  private async reconcileOne(intent: StoredIntent): Promise<void> {
    const { kind, id, branch } = intent.namespace;
    const scope: ChangeScope = { tenant: { kind, id }, branch, actor: intent.actor };
    // Its writer died after appending, before closing it: the events are in already.
    if (await this.events.hasEventsOf(intent.namespace, intent.id.toHexString())) {
      await this.intents.deleteOne(intent);
      return;
    }
    const happened: RecordedChange[] = [];
    for (const change of intent.changes) {
      const lookup = this.lookups.get(change.resource);
      if (!lookup) continue;
      const now = await lookup({ tenant: scope.tenant, branch }, change);
      // What the database shows: a created or updated resource that exists, a deleted one
      // that does not. Anything else did not happen (or was undone since).
      if (change.type === 'deleted' && now === null)
        happened.push({ ...change, owner: null, data: null });
      else if (change.type !== 'deleted' && now !== null)
        happened.push({ ...change, owner: now.owner, data: now.data });
    }
    // A feed turned off records nothing, not even what its writes left behind.
    if (this.settings.enabled) {
      await this.appender.append(scope, happened, intent.id.toHexString());
    }
    await this.intents.deleteOne(intent);
  }

  /** Deletes events past retention, keeping each namespace's newest (it carries the numbering). */
  private async expire(): Promise<void> {
    const cutoff = new Date(Date.now() - this.settings.retentionMs);
    await onEveryCluster(this.feeds.every(), async (feed) => {
      for (const namespace of await this.events.namespacesWithEventsBefore(
        feed,
        cutoff,
        SWEEP_BATCH,
      )) {
        const newest = await this.events.newestSeqIn(feed, namespace);
        await this.events.deleteOlderThan(feed, namespace, cutoff, newest);
      }
    });
  }
}
