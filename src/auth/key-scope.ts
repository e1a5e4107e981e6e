import { BranchMismatchError } from './auth.errors';
import type { KeyScope } from './api-key.repository';

/**
 * A root key managing the user's keys, with the branch it is itself bound to (null: unbound).
 * A bound key is confined to its branch for key management as for everything else: otherwise
 * it could mint an unbound key, or revoke the user's other keys, and so leave its branch.
 */
export interface KeyManager {
  subject: string;
  boundBranch: string | null;
}

/** The keys a manager may list and revoke: all of the user's, or those bound to its branch. */
export function scopeOf(manager: KeyManager): KeyScope {
  return manager.boundBranch === null
    ? { subject: manager.subject }
    : { subject: manager.subject, branch: manager.boundBranch };
}

/**
 * The branch a new key is bound to. A bound manager binds every key it mints to its own branch:
 * an absent branch defaults to it and another one is refused (BRANCH_MISMATCH, as for an
 * X-Branch that contradicts the key). An unbound manager binds as asked, else to `otherwise`.
 */
export function branchOfNewKey<T extends string | null>(
  manager: KeyManager,
  requested: string | undefined,
  otherwise: T,
): string | T {
  const bound = manager.boundBranch;
  if (bound === null) return requested ?? otherwise;
  if (requested !== undefined && requested !== bound) {
    throw new BranchMismatchError(
      `The API key is bound to branch '${bound}' and may only create keys bound to it.`,
      [{ field: 'branch', message: `must be '${bound}' (or absent)` }],
    );
  }
  return bound;
}
