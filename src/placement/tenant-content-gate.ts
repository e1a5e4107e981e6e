import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { MoveGate } from './move-gate';
import { MoveWriteMarkers } from './move-write-markers.repository';
import { FeedMovingError } from './placement.errors';
import { TenantPlacements, type FeedLocation } from './tenant-placements.service';

/** The marker target of writes to a tenant's cluster-database content (feed, deliveries, records). */
export function feedWriteTarget(tenantDatabase: string): string {
  return `feed:${tenantDatabase}`;
}

/**
 * The move gate (MoveGate) of what a tenant keeps in its cluster database (ClusterDatabases: its
 * change feed, webhook deliveries and stored idempotent responses), in front of every write that
 * records events (EventsService.record) and every request that holds an Idempotency-Key. Outside
 * a move it costs a cached placement lookup; while they are paused, 503 FEED_MOVING.
 */
@Injectable()
export class TenantContentGate extends MoveGate<Tenant, FeedLocation> {
  constructor(
    private readonly placements: TenantPlacements,
    markers: MoveWriteMarkers,
  ) {
    super(markers);
  }

  protected async movingTarget(tenant: Tenant): Promise<string | null> {
    if (!(await this.placements.cachedFeedOf(tenant)).moving) return null;
    return feedWriteTarget(this.placements.databaseOf(tenant));
  }

  protected readNow(tenant: Tenant): Promise<FeedLocation> {
    return this.placements.feedOf(tenant, { fresh: true });
  }

  protected pausedIn(feed: FeedLocation): boolean {
    return feed.moving?.phase === 'paused';
  }

  protected refusal(): Error {
    return new FeedMovingError();
  }
}
