import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { MoveWriteMarkers, TenantPlacements } from '../placement';
import { FeedMovingError } from './events.errors';

/** The marker target of writes to a tenant's change feed (its events and intents). */
export function feedWriteTarget(tenantDatabase: string): string {
  return `feed:${tenantDatabase}`;
}

/**
 * The write side of moving a tenant's change feed, in front of every write that records events
 * (EventsService.record). Outside a move it costs a cached placement lookup. While the feed is
 * being moved, the write marks itself under way, then reads the placement afresh: paused → 503
 * FEED_MOVING with Retry-After, before anything is written; otherwise the write and its events
 * go to the feed where it is, and the move cannot switch the feed until the marker is gone.
 */
@Injectable()
export class FeedWriteGate {
  constructor(
    private readonly placements: TenantPlacements,
    private readonly markers: MoveWriteMarkers,
  ) {}

  /** The marker of this write when the tenant's feed is being moved; null otherwise. */
  async enter(tenant: Tenant): Promise<string | null> {
    if (!(await this.placements.feedOf(tenant)).moving) return null;
    const marker = await this.markers.begin(feedWriteTarget(this.placements.databaseOf(tenant)));
    const now = await this.placements.feedOf(tenant, { fresh: true });
    if (now.moving?.phase === 'paused') {
      await this.markers.end(marker);
      throw new FeedMovingError();
    }
    return marker;
  }

  /** The write is done (or failed). */
  async leave(marker: string | null): Promise<void> {
    if (marker !== null) await this.markers.end(marker).catch(() => undefined);
  }
}
