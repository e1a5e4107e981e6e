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
