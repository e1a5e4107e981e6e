import { Prop } from '@nestjs/mongoose';

/**
 * Whose data a request works in: a user's (root and sub callers) or a team's. The kind is part of
 * the identity because subjects are chosen by the operator and may equal a team id: (user, x) and
 * (team, x) are two tenants that nothing can make meet.
 */
export type TenantKind = 'user' | 'team';
export const TENANT_KINDS: readonly TenantKind[] = ['user', 'team'];

export interface Tenant {
  kind: TenantKind;
  /** A root user's subject, or a team id. */
  id: string;
}

/** A tenant's data in one branch: the unit that collections, the change feed and webhooks belong to. */
export interface Namespace extends Tenant {
  branch: string;
}

/**
 * The stored form of a namespace, one fragment for every collection keyed by it: schema classes
 * extend it (@nestjs/mongoose reads inherited @Prop), so the three fields are declared once.
 */
export abstract class NamespacedDocument {
  /**
   * 'user' (a root user's namespace, shared by its sub profiles) or 'team'. Registry entries
   * written before the kind was recorded get it at boot (src/migrations/tenant-kind.migration.ts).
   */
  @Prop({ type: String, required: true, enum: TENANT_KINDS })
  tenantKind!: TenantKind;

  /** A root user's subject or a team id, depending on tenantKind. */
  @Prop({ required: true })
  tenant!: string;

  @Prop({ type: String, default: '' })
  branch!: string;
}

export type StoredNamespace = Pick<NamespacedDocument, 'tenantKind' | 'tenant' | 'branch'>;

/** The filter of a namespace's documents (the prefix of every namespace index). */
export function namespaceFilter(namespace: Namespace): StoredNamespace {
  return { tenantKind: namespace.kind, tenant: namespace.id, branch: namespace.branch };
}

/** The filter of a tenant's documents in every branch (erasure). */
export function tenantFilter(tenant: Tenant): Omit<StoredNamespace, 'branch'> {
  return { tenantKind: tenant.kind, tenant: tenant.id };
}

/** The namespace a stored document belongs to. */
export function namespaceOf(doc: StoredNamespace): Namespace {
  return { kind: doc.tenantKind, id: doc.tenant, branch: doc.branch };
}

/** Index keys that start with the namespace, in the order every namespace index uses. */
export const NAMESPACE_INDEX_KEYS = { tenantKind: 1, tenant: 1, branch: 1 } as const;

/** A key for in-memory maps of namespaces; NUL cannot occur in any of the three parts. */
export function namespaceKey(namespace: Namespace): string {
  return `${namespace.kind}\u0000${namespace.id}\u0000${namespace.branch}`;
}

export function parseNamespaceKey(key: string): Namespace {
  const [kind, id, branch] = key.split('\u0000') as [TenantKind, string, string];
  return { kind, id, branch };
}
