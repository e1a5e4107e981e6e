import { DomainError } from '../common/errors';

/** The errors of the auth module; each fixes one code of the catalog. */

export class ApiKeyNotFoundError extends DomainError {
  constructor(id: string) {
    super('API_KEY_NOT_FOUND', `No API key ${id} of this user.`);
  }
}

export class InvalidBranchError extends DomainError {
  constructor(detail: string, field?: string) {
    super(
      'INVALID_BRANCH',
      detail,
      field === undefined ? undefined : [{ field, message: 'not a valid branch name' }],
    );
  }
}

/** A branch that contradicts the branch the key is bound to (X-Branch, or a key to mint). */
export class BranchMismatchError extends DomainError {
  constructor(detail: string, errors?: { field: string; message: string }[]) {
    super('BRANCH_MISMATCH', detail, errors);
  }
}

/** A wrong key from an address that used up its failed-authentication budget. */
export class TooManyFailedAuthenticationsError extends DomainError {
  constructor() {
    super(
      'RATE_LIMITED',
      'The API key is not valid, and this address has had too many failed authentications. Retry after the time in Retry-After.',
    );
  }
}

/** A sub key was asked for a sub profile that does not exist in the branch. */
export class SubProfileNotFoundError extends DomainError {
  constructor(clientId: string, accountId: string, branch: string) {
    super(
      'PROFILE_NOT_FOUND',
      `No sub profile with clientId ${clientId} and accountId ${accountId} in branch '${branch}'.`,
    );
  }
}
