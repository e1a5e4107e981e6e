import { Injectable } from '@nestjs/common';
import type { Collection, Document } from 'mongodb';
import { IdempotencyRecordSchema, type IdempotencyStores } from '../idempotency';
import type { SyncResult } from '../common/mongo/document-sync';
import type { Tenant } from '../common/tenancy/namespace';
import { ClusterDatabases } from './cluster-databases';
import { TenantContentGate } from './tenant-content-gate';

const RECORDS = 'idempotency_records';

/**
 * Idempotency records beside the tenant's change feed and deliveries, in its cluster database:
 * a stored response is a copy of tenant content. The operator's stay in the main database. A
 * request that holds a key marks itself for the tenant's moves (TenantContentGate) from its
 * admission until its outcome is kept, so a move never switches the records under it.
 */
@Injectable()
export class ClusterIdempotencyStores implements IdempotencyStores {
  constructor(
    private readonly databases: ClusterDatabases,
    private readonly gate: TenantContentGate,
  ) {}

  async recordsOf(tenant: Tenant | null): Promise<Collection<Document>> {
    const cluster = tenant ? await this.databases.clusterOf(tenant) : null;
    return this.databases.collection(cluster, RECORDS, IdempotencyRecordSchema);
  }

  everywhere(): Collection<Document>[] {
    return this.databases.everywhere(RECORDS).map(({ collection }) => collection);
  }

  /** Makes the tenant's records in the cluster database of `to` those of `from` (a move). */
  copyTenant(tenant: Tenant, move: { from: string | null; to: string }): Promise<SyncResult> {
    const fingerprint = ['state', 'token', 'expiresAt'];
    return this.databases.copyTenant(RECORDS, IdempotencyRecordSchema, tenant, move, fingerprint);
  }

  /** Deletes the tenant's records in one cluster database (a moved tenant's source). */
  deleteTenantIn(tenant: Tenant, cluster: string | null): Promise<void> {
    return this.databases.deleteTenantIn(RECORDS, tenant, cluster);
  }

  /** Deletes the tenant's records in every cluster database (an erasure). */
  eraseTenant(tenant: Tenant): Promise<void> {
    return this.databases.deleteTenantEverywhere(RECORDS, tenant);
  }

  async hold(tenant: Tenant | null): Promise<() => Promise<void>> {
    if (!tenant) return () => Promise.resolve();
    const marker = await this.gate.enter(tenant);
    return () => this.gate.leave(marker);
  }
}
