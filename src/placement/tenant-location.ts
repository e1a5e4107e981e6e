import { createHash } from 'node:crypto';
import type { Tenant } from '../common/tenancy/namespace';

/**
 * Where a tenant's native collections live: a database on a cluster of DATA_CLUSTERS. `cluster:
 * null` is the main database on the main connection, where collections created before tenants
 * were placed stay until the tenant is moved.
 */
export interface TenantLocation {
  cluster: string | null;
  database: string;
}

/** `tenant_` and 32 hex digits of the digest: 39 characters. */
const DIGEST_LENGTH = 32;

/**
 * The database of a tenant: a digest of the service's main database name and the tenant, so two
 * deployments sharing a cluster never share a tenant database, and no subject or team id reaches
 * a database name. 39 characters of `[a-z0-9_]`, within MongoDB's limit (64 bytes, none of
 * `/\. "$*<>:|?`) and FerretDB's (63 of `[A-Za-z0-9_-]`).
 */
export function tenantDatabaseName(mainDatabase: string, tenant: Tenant): string {
  const digest = createHash('sha256')
    .update(`${mainDatabase}\u0000${tenant.kind}\u0000${tenant.id}`)
    .digest('hex');
  return `tenant_${digest.slice(0, DIGEST_LENGTH)}`;
}
