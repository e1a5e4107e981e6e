import { DomainError } from '../common/errors';

export class UnknownRegionError extends DomainError {
  constructor(region: string, known: string[]) {
    super(
      'UNKNOWN_REGION',
      `No data cluster is in region ${region}; the regions are: ${known.join(', ')}.`,
      [{ field: 'region', message: `must be one of: ${known.join(', ')}` }],
    );
  }
}

export class NoOpenClusterError extends DomainError {
  constructor(region: string) {
    super('NO_OPEN_CLUSTER', `Every data cluster of region ${region} is closed to new tenants.`, [
      { field: 'region', message: 'has no open cluster' },
    ]);
  }
}

/** The tenant's change feed is being switched to another cluster (MOVE_MAX_WRITE_PAUSE_MS at most). */
export class FeedMovingError extends DomainError {
  constructor() {
    super(
      'FEED_MOVING',
      "The tenant's data is being moved to another cluster; its writes are paused for a few seconds. Retry after the time in Retry-After.",
    );
  }

  override get headers(): Record<string, string> {
    return { 'Retry-After': '1' };
  }
}
