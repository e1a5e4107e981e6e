import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/tenancy/namespace';
import { MoveWriteMarkers } from './move-write-markers.repository';
import { FeedMovingError } from './placement.errors';
import { TenantPlacements } from './tenant-placements.service';

/** The marker target of writes to a tenant's cluster-database content (feed, deliveries, records). */
export function feedWriteTarget(tenantDatabase: string): string {
  return `feed:${tenantDatabase}`;
}

/**
 * The write side of moving what a tenant keeps in its cluster database (ClusterDatabases: its
 * change feed, webhook deliveries and stored idempotent responses), in front of every write that
 * records events (EventsService.record) and every request that holds an Idempotency-Key. Outside
 * a move it costs a cached placement lookup. While they are being moved, the write marks itself
 * under way, then reads the placement afresh: paused → 503 FEED_MOVING with Retry-After, before
 * anything is written; otherwise it goes on where they are, and the move cannot switch them
 * until the marker is gone.
 */
@Injectable()
export class TenantContentGate {
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
