import { DomainError, ForbiddenError } from '../common/errors';
import { ADMIN_SUBJECT_GROUP } from './profile.constants';
import type { ProfileKey } from './profile.repository';

/** The errors of the profile module; each fixes one code of the catalog. */

function describeKey(key: ProfileKey): string {
  return key.clientId === '' && key.accountId === ''
    ? `root profile of subject ${key.subject}`
    : `sub profile with clientId ${key.clientId} and accountId ${key.accountId} in branch '${key.branch}'`;
}

export class ProfileNotFoundError extends DomainError {
  constructor(key: ProfileKey) {
    super('PROFILE_NOT_FOUND', `There is no ${describeKey(key)}.`);
  }
}

/** A user's root profile, named by subject (operator API). */
export class UserNotFoundError extends DomainError {
  constructor(subject: string) {
    super('PROFILE_NOT_FOUND', `No user with subject ${subject}.`);
  }
}

export class DuplicateUserError extends DomainError {
  constructor(detail = 'A user with this subject or email exists already.') {
    super('DUPLICATE_USER', detail);
  }
}

/** More than one sub profile answers to the accountId: the same code as any ambiguous match. */
export class AmbiguousTargetError extends DomainError {
  constructor(accountId: string, branch: string) {
    super(
      'AMBIGUOUS_MATCH',
      `accountId ${accountId} exists under more than one clientId in branch '${branch}'; add ?clientId=.`,
    );
  }
}

/** POST /profile for a sub profile that exists; `existingId` names it. */
export class ProfileExistsError extends DomainError {
  constructor(key: ProfileKey, existingId: string) {
    super('PROFILE_EXISTS', `The ${describeKey(key)} exists already: ${existingId}.`, undefined, {
      existingId,
    });
  }
}

export class ConcurrentChangeError extends DomainError {
  constructor(detail = 'The profile kept changing concurrently; retry the request.') {
    super('CONFLICT', detail);
  }

  static createdAndRemoved(key: ProfileKey): ConcurrentChangeError {
    return new ConcurrentChangeError(
      `The ${describeKey(key)} was created and removed concurrently.`,
    );
  }
}

export class GroupLimitError extends DomainError {
  constructor(maxGroups: number) {
    super('CONFLICT', `A profile holds at most ${maxGroups} groups.`);
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
