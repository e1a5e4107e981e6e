import { Injectable } from '@nestjs/common';
import type { Collection, Document } from 'mongodb';
import { IdempotencyRecordSchema, type IdempotencyStores } from '../common/idempotency';
import { syncDocuments, type SyncResult } from '../common/mongo/document-sync';
import { tenantFilter, type Tenant } from '../common/tenancy/namespace';
import { ClusterDatabases, onEveryCluster } from './cluster-databases';
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

  everywhere(): { where: string; records: Collection<Document> }[] {
    return this.databases
      .everywhere(RECORDS)
      .map(({ cluster, collection }) => ({ where: cluster ?? 'main', records: collection }));
  }

  /** Makes the tenant's records in the cluster database of `to` those of `from` (a move). */
  async copyTenant(tenant: Tenant, from: string | null, to: string): Promise<SyncResult> {
    const [source, target] = await Promise.all([
      this.databases.collection(from, RECORDS, IdempotencyRecordSchema),
      this.databases.collection(to, RECORDS, IdempotencyRecordSchema),
    ]);
    return syncDocuments(source, target, tenantFilter(tenant), ['state', 'token', 'expiresAt']);
  }

  /** Deletes the tenant's records in one cluster database (a moved tenant's source). */
  async deleteTenantIn(tenant: Tenant, cluster: string | null): Promise<void> {
    const records = await this.databases.collection(cluster, RECORDS, IdempotencyRecordSchema);
    await records.deleteMany(tenantFilter(tenant));
  }

  /** Deletes the tenant's records in every cluster database (an erasure). */
  async eraseTenant(tenant: Tenant): Promise<void> {
    await onEveryCluster(this.databases.everywhere(RECORDS), ({ collection }) =>
      collection.deleteMany(tenantFilter(tenant)),
    );
  }

  async hold(tenant: Tenant | null): Promise<() => Promise<void>> {
    if (!tenant) return () => Promise.resolve();
    const marker = await this.gate.enter(tenant);
    return () => this.gate.leave(marker);
  }
}
