import type { Principal } from '../auth';
import { ValidationFailedError } from '../common/errors';
import { OnlyOwnProfileError } from './profile.errors';
import { rootKey, type ProfileKey } from './profile.repository';
import type { ProfileTarget } from './profile.types';

/** The callers of /profile; team and operator keys are refused by the guard. */
export type ProfilePrincipal = Extract<Principal, { kind: 'root' | 'sub' }>;

/** The caller's own profile: the root profile for a root key, its sub profile for a sub key. */
export function ownKey(principal: ProfilePrincipal): ProfileKey {
  return principal.kind === 'root'
    ? rootKey(principal.subject)
    : {
        subject: principal.subject,
        branch: principal.branch,
        clientId: principal.clientId,
        accountId: principal.accountId,
      };
}

function sameKey(a: ProfileKey, b: ProfileKey): boolean {
  return (
    a.subject === b.subject &&
    a.branch === b.branch &&
    a.clientId === b.clientId &&
    a.accountId === b.accountId
  );
}

/** Writes to one profile are queued in-process under this key (see ProfileUpdateService). */
export function lockKey(key: ProfileKey): string {
  return JSON.stringify([key.subject, key.branch, key.clientId, key.accountId]);
}

/** A sub caller may act only on its own profile (decided before any lookup). */
export function assertOwnProfile(principal: ProfilePrincipal, key: ProfileKey): void {
  if (principal.kind === 'sub' && !sameKey(key, ownKey(principal))) {
    throw new OnlyOwnProfileError();
  }
}

/**
 * Without clientId and accountId: the caller's own profile. With both: that sub profile of the
 * caller's subject in the request branch; both '' names the subject's root profile.
 */
export function targetKey(principal: ProfilePrincipal, target: ProfileTarget): ProfileKey {
  const { clientId, accountId } = target;
  if (clientId === undefined && accountId === undefined) return ownKey(principal);
  if (clientId === undefined || accountId === undefined) {
    throw new ValidationFailedError([
      {
        field: clientId === undefined ? 'clientId' : 'accountId',
        message: 'clientId and accountId must be given together',
      },
    ]);
  }
  if (clientId === '' && accountId === '') return rootKey(principal.subject);
  if (clientId === '' || accountId === '') {
    throw new ValidationFailedError([
      {
        field: clientId === '' ? 'clientId' : 'accountId',
        message:
          'clientId and accountId must both be non-empty, or both empty for the root profile',
      },
    ]);
  }
  return { subject: principal.subject, branch: principal.branch, clientId, accountId };
}
