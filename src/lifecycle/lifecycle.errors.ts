import { DomainError } from '../common/errors';
import type { Tenant } from '../common/tenancy/namespace';

export class ErasureNotFoundError extends DomainError {
  constructor(id: string) {
    super('ERASURE_NOT_FOUND', `No erasure with id ${id}.`);
  }
}

/** The user or team to erase does not exist, and was never erased. */
export class ErasureTargetNotFoundError extends DomainError {
  constructor(tenant: Tenant) {
    const user = tenant.kind === 'user';
    super(
      user ? 'PROFILE_NOT_FOUND' : 'TEAM_NOT_FOUND',
      user ? `No user with subject ${tenant.id}.` : `No team with id ${tenant.id}.`,
    );
  }
}
