import { DomainError } from '../common/errors';
import type { ErasureKind } from './erasure.schema';

export class ErasureNotFoundError extends DomainError {
  constructor(id: string) {
    super('ERASURE_NOT_FOUND', `No erasure with id ${id}.`);
  }
}

/** The user or team to erase does not exist, and was never erased. */
export class ErasureTargetNotFoundError extends DomainError {
  constructor(kind: ErasureKind, target: string) {
    super(
      kind === 'user' ? 'PROFILE_NOT_FOUND' : 'TEAM_NOT_FOUND',
      kind === 'user' ? `No user with subject ${target}.` : `No team with id ${target}.`,
    );
  }
}
