import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';

/** The codes placement owns: where new tenants go, and the pause of a tenant's change feed in a move. */
export const PLACEMENT_ERRORS = defineErrors({
  UNKNOWN_REGION: { status: HttpStatus.BAD_REQUEST, title: 'No data cluster is in this region' },
  NO_OPEN_CLUSTER: {
    status: HttpStatus.BAD_REQUEST,
    title: 'No data cluster of the region takes new tenants',
  },
  FEED_MOVING: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: "The tenant's change feed is being moved; its writes are paused briefly",
  },
});

export class UnknownRegionError extends DomainError {
  constructor(region: string, known: string[]) {
    super(
      PLACEMENT_ERRORS.UNKNOWN_REGION,
      `No data cluster is in region ${region}; the regions are: ${known.join(', ')}.`,
      [{ field: 'region', message: `must be one of: ${known.join(', ')}` }],
    );
  }
}

export class NoOpenClusterError extends DomainError {
  constructor(region: string) {
    super(
      PLACEMENT_ERRORS.NO_OPEN_CLUSTER,
      `Every data cluster of region ${region} is closed to new tenants.`,
      [{ field: 'region', message: 'has no open cluster' }],
    );
  }
}

/** The tenant's change feed is being switched to another cluster (MOVE_MAX_WRITE_PAUSE_MS at most). */
export class FeedMovingError extends DomainError {
  constructor() {
    super(
      PLACEMENT_ERRORS.FEED_MOVING,
      "The tenant's data is being moved to another cluster; its writes are paused for a few seconds. Retry after the time in Retry-After.",
    );
  }

  override get headers(): Record<string, string> {
    return { 'Retry-After': '1' };
  }
}
