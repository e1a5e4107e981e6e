import { Injectable } from '@nestjs/common';
import { tenantFilter, type Tenant } from '../common/tenancy/namespace';
import { syncDocuments, type SyncResult } from '../common/mongo/document-sync';
import { FeedCollections } from './feed-collections';

/**
 * The copying side of moving a tenant's change feed from one cluster database to another (the
 * tenant move runs it, and switches the placement). Events never change once appended, so a
 * comparison by `_id` copies the new ones and deletes those retention removed at the source.
 */
@Injectable()
export class FeedMover {
  constructor(private readonly feeds: FeedCollections) {}

  /** Copies the tenant's events that the target lacks (writes go on at the source meanwhile). */
  async copyEvents(tenant: Tenant, from: string | null, to: string): Promise<SyncResult> {
    const [source, target] = await Promise.all([this.feeds.at(from), this.feeds.at(to)]);
    return syncDocuments(source.events, target.events, tenantFilter(tenant), []);
  }

  /**
   * The last step, with the tenant's event-recording writes paused: the events once more, then
   * the intents of writes that died (no write is under way) go over, and leave the source.
   */
  async finish(tenant: Tenant, from: string | null, to: string): Promise<SyncResult> {
    const [source, target] = await Promise.all([this.feeds.at(from), this.feeds.at(to)]);
    const events = await syncDocuments(source.events, target.events, tenantFilter(tenant), []);
    const intents = await syncDocuments(source.intents, target.intents, tenantFilter(tenant), []);
    if (intents.refused === 0) await source.intents.deleteMany(tenantFilter(tenant));
    return { copied: events.copied, refused: events.refused + intents.refused };
  }

  /** Removes what is left of the tenant's feed in a cluster database (a source, after the grace). */
  async removeFrom(tenant: Tenant, cluster: string | null): Promise<void> {
    const feed = await this.feeds.at(cluster);
    await feed.intents.deleteMany(tenantFilter(tenant));
    await feed.events.deleteMany(tenantFilter(tenant));
  }
}
