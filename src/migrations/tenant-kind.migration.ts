import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type { TenantKind } from '../common/tenancy/namespace';

/** What an older version left: registry entries keyed by a bare tenant id, and their indexes. */
const REGISTRY = 'data_collections';
const LEGACY_INDEXES = ['tenant_1_branch_1_name_1', 'tenant_1_branch_1_slot_1'];

interface Claimant {
  kind: TenantKind;
  createdAt: Date;
}

/**
 * Decides whose a legacy namespace is. A bare id names a user (subject), a team, or both: an
 * operator could register a subject equal to an existing team id, and until the kind was part of
 * the key both shared one namespace. The principal that existed first owned it alone until the
 * other appeared, so it keeps it; a tie goes to the team, whose id the service generated. An id
 * that names neither stays a user's (subjects are the only ids that come from outside).
 */
export function ownerOfLegacyNamespace(claimants: readonly Claimant[]): TenantKind {
  const [first] = [...claimants].sort(
    (a, b) =>
      a.createdAt.getTime() - b.createdAt.getTime() ||
      (a.kind === b.kind ? 0 : a.kind === 'team' ? -1 : 1),
  );
  return first?.kind ?? 'user';
}

/**
 * Boot-time migration of data namespaces to (kind, id) keys: stamps `tenantKind` on registry
 * entries written before it existed and drops the old unique indexes on (tenant, branch, …),
 * which would keep a user and a team with the same id from both having a collection `x`.
 * Idempotent and safe to run from several instances at once (every step is a conditional
 * update or an ignorable drop, and every instance reaches the same decision).
 */
@Injectable()
export class TenantKindMigration implements OnModuleInit {
  private readonly logger = new Logger('Migration');

  constructor(@InjectConnection() private readonly connection: Connection) {}

  async onModuleInit(): Promise<void> {
    await this.run();
  }

  /** Returns the number of registry entries it stamped. */
  async run(): Promise<number> {
    const db = this.connection.db;
    if (!db) throw new Error('database connection is not open');
    const registry = db.collection(REGISTRY);
    await this.dropLegacyIndexes();

    const tenants = (await registry.distinct('tenant', { tenantKind: { $exists: false } })).filter(
      (t): t is string => typeof t === 'string',
    );
    let stamped = 0;
    for (const tenant of tenants) {
      const [user, team] = await Promise.all([
        db.collection<{ _id: string; createdAt?: Date }>('users').findOne({ _id: tenant }),
        db.collection<{ _id: string; createdAt?: Date }>('teams').findOne({ _id: tenant }),
      ]);
      const claimants: Claimant[] = [];
      if (user) claimants.push({ kind: 'user', createdAt: user.createdAt ?? new Date(0) });
      if (team) claimants.push({ kind: 'team', createdAt: team.createdAt ?? new Date(0) });
      const kind = ownerOfLegacyNamespace(claimants);
      if (claimants.length > 1) {
        this.logger.warn(
          { tenant, kind },
          'a user and a team share this id; their former shared namespace goes to the older one',
        );
      }
      const result = await registry.updateMany(
        { tenant, tenantKind: { $exists: false } },
        { $set: { tenantKind: kind } },
      );
      stamped += result.modifiedCount;
    }
    if (stamped > 0) this.logger.log({ stamped }, 'data namespaces keyed by tenant kind');
    return stamped;
  }

  private async dropLegacyIndexes(): Promise<void> {
    const registry = this.connection.db?.collection(REGISTRY);
    if (!registry) return;
    const indexes: { name?: unknown }[] = await registry
      .listIndexes()
      .toArray()
      .catch(() => []);
    const names = new Set(indexes.map((i) => String(i.name)));
    for (const name of LEGACY_INDEXES) {
      // Another instance may drop it first; what matters is that it is gone.
      if (names.has(name)) await registry.dropIndex(name).catch(() => undefined);
    }
  }
}
