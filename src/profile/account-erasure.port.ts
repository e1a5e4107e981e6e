import type { Principal } from '../auth';
import type { TenantKind } from '../common/tenancy/namespace';

export type ErasureStatus = 'running' | 'done';

/** An account or team erasure as it is answered (DELETE /profile, the operator's erasure routes). */
export interface Erasure {
  id: string;
  kind: TenantKind;
  status: ErasureStatus;
  /** The steps finished, in order. */
  stepsDone: string[];
  collectionsDropped: number;
  /** Until when the instance working on it holds it. */
  leaseUntil: Date;
  /** How many times it was started or taken over. */
  runs: number;
  requestedAt: Date;
  finishedAt?: Date;
}

/**
 * What DELETE /profile needs of the module that erases accounts. That module (lifecycle) reads
 * and deletes profiles, so it depends on this one: profile declares the port and lifecycle
 * provides it, and profile depends on no module above it.
 */
export interface AccountErasure {
  /**
   * Starts erasing the caller's own account, as the operator's erasure does: 403 for a key bound
   * to a branch (an account spans every branch), 400 when `confirm` is not the caller's subject.
   */
  eraseOwnAccount(
    principal: Extract<Principal, { kind: 'root' }>,
    confirm: string,
  ): Promise<Erasure>;
}

export const ACCOUNT_ERASURE = Symbol('AccountErasure');
