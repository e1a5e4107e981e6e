import { HttpStatus } from '@nestjs/common';
import { AUTH_ERRORS } from '../auth/auth.errors';
import { defineErrors, DomainError } from '../common/errors';
import type { Tenant } from '../common/tenancy/namespace';
import { TEAM_ERRORS } from '../team/team.errors';

/** The codes lifecycle owns: erasures and tenant moves. */
export const LIFECYCLE_ERRORS = defineErrors({
  UNKNOWN_CLUSTER: { status: HttpStatus.BAD_REQUEST, title: 'No data cluster has this name' },
  ERASURE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The erasure does not exist' },
  MOVE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The tenant move does not exist' },
  CLUSTER_CLOSED: {
    status: HttpStatus.CONFLICT,
    title: 'The data cluster takes no new tenants',
  },
  ALREADY_ON_CLUSTER: {
    status: HttpStatus.CONFLICT,
    title: 'The tenant is on this data cluster already',
  },
  MOVE_RUNNING: { status: HttpStatus.CONFLICT, title: 'A move of the tenant is running' },
  ERASURE_RUNNING: { status: HttpStatus.CONFLICT, title: 'An erasure of the tenant is running' },
});

export class ErasureNotFoundError extends DomainError {
  constructor(id: string) {
    super(LIFECYCLE_ERRORS.ERASURE_NOT_FOUND, `No erasure with id ${id}.`);
  }
}

/** The user or team to erase or move does not exist (and, for an erasure, was never erased). */
export class TenantNotFoundError extends DomainError {
  constructor(tenant: Tenant) {
    const user = tenant.kind === 'user';
    super(
      user ? AUTH_ERRORS.PROFILE_NOT_FOUND : TEAM_ERRORS.TEAM_NOT_FOUND,
      user ? `No user with subject ${tenant.id}.` : `No team with id ${tenant.id}.`,
    );
  }
}

export class MoveNotFoundError extends DomainError {
  constructor(id: string) {
    super(LIFECYCLE_ERRORS.MOVE_NOT_FOUND, `No tenant move with id ${id}.`);
  }
}

export class UnknownClusterError extends DomainError {
  constructor(cluster: string, known: string[]) {
    super(
      LIFECYCLE_ERRORS.UNKNOWN_CLUSTER,
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
    super(LIFECYCLE_ERRORS[reason], detail, undefined, extensions);
  }
}
