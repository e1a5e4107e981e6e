import type { Collection, Document } from 'mongodb';
import type { Tenant } from '../common/tenancy/namespace';

/**
 * Where idempotency records live, bound by the composition root: a tenant's in the database
 * that holds its other request-derived content (its cluster database), the operator's in the
 * main one. Common code does not know about clusters; this is what it asks.
 */
export interface IdempotencyStores {
  /** The records collection of a tenant (null: the operator's, in the main database). */
  recordsOf(tenant: Tenant | null): Promise<Collection<Document>>;
  /** Every records collection, for the sweeper. */
  everywhere(): Collection<Document>[];
  /**
   * Keeps the tenant's records where they are while a request with a key runs, and returns the
   * release; refuses (503) while a move of them is switching.
   */
  hold(tenant: Tenant | null): Promise<() => Promise<void>>;
}

export const IDEMPOTENCY_STORES = Symbol('IDEMPOTENCY_STORES');
