import type { Model } from 'mongoose';
import type { Tenant } from '../auth';
import type { EventIntentDocument } from './event-intent.schema';
import {
  namespaceFilter,
  namespaceKey,
  type ChangeScope,
  type RecordedChange,
  type ResourceLookup,
} from './event-scope';
import type { EventDocument, EventResource } from './event.schema';

/** Events and intents one sweep handles at most; the next sweep takes the rest. */
const SWEEP_BATCH = 500;

/** What the sweep needs of the feed. */
export interface SweptFeed {
  append(scope: ChangeScope, changes: RecordedChange[]): Promise<void>;
  latest(tenant: Tenant, branch: string): Promise<number>;
  lookup(resource: EventResource): ResourceLookup | undefined;
}

/**
 * The feed's background work, every EVENTS_SWEEP_MS on every instance: record the events of
 * writes whose writer died (intents older than EVENTS_INTENT_GRACE_MS), then delete events past
 * EVENTS_RETENTION_MS.
 */
export class EventSweep {
  constructor(
    private readonly events: Model<EventDocument>,
    private readonly intents: Model<EventIntentDocument>,
    private readonly settings: { intentGraceMs: number; retentionMs: number },
    private readonly feed: SweptFeed,
  ) {}

  async run(): Promise<void> {
    await this.reconcile();
    await this.expire();
  }

  private async reconcile(): Promise<void> {
    const before = new Date(Date.now() - this.settings.intentGraceMs);
    const abandoned = await this.intents
      .find({ createdAt: { $lt: before } })
      .sort({ createdAt: 1 })
      .limit(SWEEP_BATCH)
      .lean<EventIntentDocument[]>()
      .exec();
    for (const intent of abandoned) {
      const tenant: Tenant = { kind: intent.tenantKind, id: intent.tenant };
      const scope: ChangeScope = { tenant, branch: intent.branch, actor: intent.actor };
      const happened: RecordedChange[] = [];
      for (const change of intent.changes) {
        const lookup = this.feed.lookup(change.resource);
        if (!lookup) continue;
        const now = await lookup({ tenant, branch: intent.branch }, change);
        // What the database shows: a created or updated resource that exists, a deleted one
        // that does not. Anything else did not happen (or was undone since).
        if (change.type === 'deleted' && now === null)
          happened.push({ ...change, owner: null, data: null });
        else if (change.type !== 'deleted' && now !== null)
          happened.push({ ...change, owner: now.owner, data: now.data });
      }
      await this.feed.append(scope, happened);
      await this.intents.deleteOne({ _id: intent._id }).exec();
    }
  }

  /** Deletes events past retention, keeping each namespace's newest (it carries the numbering). */
  private async expire(): Promise<void> {
    const cutoff = new Date(Date.now() - this.settings.retentionMs);
    const old = await this.events
      .find({ at: { $lt: cutoff } })
      .limit(SWEEP_BATCH)
      .select({ tenantKind: 1, tenant: 1, branch: 1 })
      .lean<Pick<EventDocument, 'tenantKind' | 'tenant' | 'branch'>[]>()
      .exec();
    const namespaces = new Map(
      old.map((doc) => [
        namespaceKey({ kind: doc.tenantKind, id: doc.tenant }, doc.branch),
        { kind: doc.tenantKind, id: doc.tenant, branch: doc.branch },
      ]),
    );
    for (const { kind, id, branch } of namespaces.values()) {
      const newest = await this.feed.latest({ kind, id }, branch);
      await this.events
        .deleteMany({
          ...namespaceFilter({ kind, id }, branch),
          at: { $lt: cutoff },
          seq: { $lt: newest },
        })
        .exec();
    }
  }
}
