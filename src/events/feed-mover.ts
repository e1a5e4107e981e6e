import { Injectable } from '@nestjs/common';
import type { SyncResult } from '../common/mongo/document-sync';
import type { Tenant } from '../common/tenancy/namespace';
import { FeedCollections, INTENTS, type CopyProgress } from './feed-collections';

/**
 * The copying side of moving a tenant's change feed from one cluster database to another (the
 * tenant move runs it, and switches the placement). Events never change once appended, so a
 * comparison by `_id` copies the new ones and deletes those retention removed at the source.
 */
@Injectable()
export class FeedMover {
  constructor(private readonly feeds: FeedCollections) {}

  /**
   * Copies the tenant's events that the target lacks (writes go on at the source meanwhile): all
   * of them, or (`since`) only those appended from then on — a catch-up pass.
   */
  copyEvents(
    tenant: Tenant,
    move: { from: string | null; to: string },
    since: Date | undefined,
    onBatch: CopyProgress,
  ): Promise<SyncResult> {
    return since === undefined
      ? this.feeds.copyTenant(tenant, move, 'events', onBatch)
      : this.feeds.copyTenantEventsSince(tenant, move, since, onBatch);
  }

  /**
   * The last step, with the tenant's event-recording writes paused: the events appended since
   * `since` once more (those before, copied by the passes before, never change; the target's own
   * retention removes the expired), then the intents of writes that died (no write is under way)
   * go over, and leave the source.
   */
  async finish(
    tenant: Tenant,
    move: { from: string | null; to: string },
    since: Date | undefined,
    onBatch: CopyProgress,
  ): Promise<SyncResult> {
    const [events, intents] = await Promise.all([
      this.copyEvents(tenant, move, since, onBatch),
      this.feeds.copyTenant(tenant, move, 'intents'),
    ]);
    if (intents.refused === 0) await this.feeds.deleteTenantIn(tenant, move.from, [INTENTS]);
    return { copied: events.copied, refused: events.refused + intents.refused };
  }

  /** Removes what is left of the tenant's feed in a cluster database (a source, after the grace). */
  removeFrom(tenant: Tenant, cluster: string | null): Promise<void> {
    return this.feeds.deleteTenantIn(tenant, cluster);
  }
}
