import { HttpStatus } from '@nestjs/common';
import { AUTH_ERRORS } from '../auth/auth.errors';
import { COMMON_ERRORS, defineErrors, DomainError, ForbiddenError } from '../common/errors';
import { DATA_ERRORS } from '../data/data.errors';
import { ADMIN_SUBJECT_GROUP } from './profile.constants';
import type { ProfileKey } from './profile.repository';

/**
 * The codes profile owns. A missing profile is auth's PROFILE_NOT_FOUND, an ambiguous sub profile
 * data's AMBIGUOUS_MATCH.
 */
export const PROFILE_ERRORS = defineErrors({
  DUPLICATE_USER: {
    status: HttpStatus.CONFLICT,
    title: 'A user with this subject or email exists',
  },
  PROFILE_EXISTS: { status: HttpStatus.CONFLICT, title: 'The profile exists already' },
});

/** The errors of the profile module; each fixes one code. */

function describeKey(key: ProfileKey): string {
  return key.clientId === '' && key.accountId === ''
    ? `root profile of subject ${key.subject}`
    : `sub profile with clientId ${key.clientId} and accountId ${key.accountId} in branch '${key.branch}'`;
}

export class ProfileNotFoundError extends DomainError {
  constructor(key: ProfileKey) {
    super(AUTH_ERRORS.PROFILE_NOT_FOUND, `There is no ${describeKey(key)}.`);
  }
}

/** A user's root profile, named by subject (operator API). */
export class UserNotFoundError extends DomainError {
  constructor(subject: string) {
    super(AUTH_ERRORS.PROFILE_NOT_FOUND, `No user with subject ${subject}.`);
  }
}

export class DuplicateUserError extends DomainError {
  constructor(detail = 'A user with this subject or email exists already.') {
    super(PROFILE_ERRORS.DUPLICATE_USER, detail);
  }
}

/** More than one sub profile answers to the accountId: the same code as any ambiguous match. */
export class AmbiguousTargetError extends DomainError {
  constructor(accountId: string, branch: string) {
    super(
      DATA_ERRORS.AMBIGUOUS_MATCH,
      `accountId ${accountId} exists under more than one clientId in branch '${branch}'; add ?clientId=.`,
    );
  }
}

/** POST /profile for a sub profile that exists; `existingId` names it. */
export class ProfileExistsError extends DomainError {
  constructor(key: ProfileKey, existingId: string) {
    super(
      PROFILE_ERRORS.PROFILE_EXISTS,
      `The ${describeKey(key)} exists already: ${existingId}.`,
      undefined,
      {
        existingId,
      },
    );
  }
}

export class ConcurrentChangeError extends DomainError {
  constructor(detail = 'The profile kept changing concurrently; retry the request.') {
    super(COMMON_ERRORS.CONFLICT, detail);
  }

  static createdAndRemoved(key: ProfileKey): ConcurrentChangeError {
    return new ConcurrentChangeError(
      `The ${describeKey(key)} was created and removed concurrently.`,
    );
  }
}

export class GroupLimitError extends DomainError {
  constructor(maxGroups: number) {
    super(COMMON_ERRORS.CONFLICT, `A profile holds at most ${maxGroups} groups.`);
  }
}

export class OnlyOwnProfileError extends ForbiddenError {
  constructor() {
    super('A sub profile key may act only on its own profile.');
  }
}

export class MetadataForbiddenError extends ForbiddenError {
  constructor() {
    super('metadata can be changed only with a root key.');
  }
}

export class GroupChangeForbiddenError extends ForbiddenError {
  constructor() {
    super(
      `Groups can be changed with a root key, or a sub key whose profile holds the group '${ADMIN_SUBJECT_GROUP}'.`,
    );
  }
}

export class SubProfileListForbiddenError extends ForbiddenError {
  constructor() {
    super(
      `Sub profiles can be listed with a root key, or a sub key whose profile holds the group '${ADMIN_SUBJECT_GROUP}'.`,
    );
  }
}
