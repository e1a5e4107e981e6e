import { DomainError } from '../common/errors';
import type { Tenant } from '../common/tenancy/namespace';

export class ErasureNotFoundError extends DomainError {
  constructor(id: string) {
    super('ERASURE_NOT_FOUND', `No erasure with id ${id}.`);
  }
}

/** The user or team to erase or move does not exist (and, for an erasure, was never erased). */
export class TenantNotFoundError extends DomainError {
  constructor(tenant: Tenant) {
    const user = tenant.kind === 'user';
    super(
      user ? 'PROFILE_NOT_FOUND' : 'TEAM_NOT_FOUND',
      user ? `No user with subject ${tenant.id}.` : `No team with id ${tenant.id}.`,
    );
  }
}

export class MoveNotFoundError extends DomainError {
  constructor(id: string) {
    super('MOVE_NOT_FOUND', `No tenant move with id ${id}.`);
  }
}

export class UnknownClusterError extends DomainError {
  constructor(cluster: string, known: string[]) {
    super(
      'UNKNOWN_CLUSTER',
      `No data cluster is named ${cluster}; the clusters are: ${known.join(', ')}.`,
      [{ field: 'cluster', message: `must be one of: ${known.join(', ')}` }],
    );
  }
}

/** Why a move cannot start now: the target is closed, the tenant is there, a move or an erasure runs. */
export class MoveConflictError extends DomainError {
  constructor(
    reason: 'CLUSTER_CLOSED' | 'ALREADY_ON_CLUSTER' | 'MOVE_RUNNING' | 'ERASURE_RUNNING',
    detail: string,
    extensions?: Record<string, unknown>,
  ) {
    super(reason, detail, undefined, extensions);
  }
}
