import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { LookupCache } from '../common/cache/lookup-cache';
import { isObjectIdHex } from '../common/mongo/object-id';
import type { Tenant } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { FULL_GRANT, type AccessGrant, type Scope } from './access-grant';
import { ApiKeyDocument, type ApiKeyKind } from './api-key.schema';

export interface ApiKeyRecord {
  id: string;
  digest: string;
  prefix: string;
  name: string;
  kind: ApiKeyKind;
  subject: string;
  teamId: string;
  clientId: string;
  accountId: string;
  profileId: string;
  branch: string | null;
  expiresAt: Date | null;
  /** What the key may do; FULL_GRANT for keys made without limits. */
  grant: AccessGrant;
  /** Last use, to within API_KEY_LAST_USED_INTERVAL_MS; null: none recorded. */
  lastUsedAt: Date | null;
  /** A publishable key's browser origins; null for the other kinds. */
  allowedOrigins: string[] | null;
  createdAt: Date;
}

/** A key to store; without `grant`, one without limits. */
export type NewApiKey = Omit<
  ApiKeyRecord,
  'id' | 'createdAt' | 'grant' | 'lastUsedAt' | 'allowedOrigins'
> & {
  grant?: AccessGrant;
  allowedOrigins?: string[] | null;
};

/** A key's use to record: its id and when. */
export interface KeyUse {
  id: string;
  at: Date;
}

/** Which keys a caller manages: the user's, and with `branch` only those bound to that branch. */
export interface KeyScope {
  subject: string;
  branch?: string;
}

function scopeFilter(scope: KeyScope): { subject: string; branch?: string } {
  return scope.branch === undefined
    ? { subject: scope.subject }
    : { subject: scope.subject, branch: scope.branch };
}

/**
 * The keys of a tenant, as a filter and as the same test on a cached key: a user's root, sub and
 * publishable keys (by subject), or a team's team and publishable keys (by team id; a user's keys
 * hold an empty team id, a team's an empty subject).
 */
function keysOf(tenant: Tenant): {
  filter: { subject: string } | { teamId: string };
  matches: (key: ApiKeyRecord) => boolean;
} {
  switch (tenant.kind) {
    case 'user':
      return { filter: { subject: tenant.id }, matches: (key) => key.subject === tenant.id };
    case 'team':
      return { filter: { teamId: tenant.id }, matches: (key) => key.teamId === tenant.id };
  }
}

function toRecord(doc: ApiKeyDocument): ApiKeyRecord {
  const { _id, scopes, collections, allowedIps, lastUsedAt, allowedOrigins, ...rest } = doc;
  const limited = (scopes ?? collections ?? allowedIps ?? null) !== null;
  const grant: AccessGrant = limited
    ? {
        scopes: (scopes ?? null) as Scope[] | null,
        collections: collections ?? null,
        allowedIps: allowedIps ?? null,
      }
    : FULL_GRANT;
  return {
    ...rest,
    id: _id.toHexString(),
    grant,
    lastUsedAt: lastUsedAt ?? null,
    allowedOrigins: allowedOrigins ?? null,
  };
}

@Injectable()
export class ApiKeyRepository implements OnModuleInit {
  /**
   * Keys by digest (API_KEY_CACHE_MS, API_KEY_CACHE_SIZE): a key revoked through this instance
   * stops working here at once, through another one within API_KEY_CACHE_MS. Expiry is checked
   * on every request (ApiKeyService.authenticate), cached or not.
   */
  private readonly cache: LookupCache<ApiKeyRecord>;

  constructor(
    @InjectModel(ApiKeyDocument.name) private readonly keys: Model<ApiKeyDocument>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cache = new LookupCache(config.apiKeyCache);
  }

  async onModuleInit(): Promise<void> {
    await this.keys.init();
  }

  async insert({
    grant = FULL_GRANT,
    allowedOrigins = null,
    ...key
  }: NewApiKey): Promise<ApiKeyRecord> {
    const created = await this.keys.create({
      ...key,
      allowedOrigins: allowedOrigins && [...allowedOrigins],
      scopes: grant.scopes && [...grant.scopes],
      collections: grant.collections && { ...grant.collections },
      allowedIps: grant.allowedIps && [...grant.allowedIps],
    });
    return toRecord(created.toObject<ApiKeyDocument>());
  }

  /**
   * The lookup behind every authenticated request: from this instance's cache when it looked the
   * key up within API_KEY_CACHE_MS, else from the driver's collection directly (a mongoose Query
   * — casting, middleware, lean conversion — cost about a tenth of the service's CPU per request
   * in the benchmarks). The filter is a server-computed hex digest. Concurrent lookups of one
   * key share one read (LookupCache.load).
   */
  findByDigest(digest: string): Promise<ApiKeyRecord | null> {
    return this.cache.load(digest, async () => {
      const doc = await this.keys.collection.findOne<ApiKeyDocument>({ digest });
      return doc ? toRecord(doc) : null;
    });
  }

  /** The key if this instance's cache holds it; never a database command. */
  findCached(digest: string): ApiKeyRecord | undefined {
    return this.cache.get(digest);
  }

  /**
   * Several digests in one command (the paced lookups of an address over its failed-auth
   * budget): the record of each, in the order asked, null where there is none. Found keys are
   * cached as by findByDigest.
   */
  async findManyByDigest(digests: string[]): Promise<(ApiKeyRecord | null)[]> {
    const mark = this.cache.mark();
    const docs = await this.keys.collection
      .find<ApiKeyDocument>({ digest: { $in: [...new Set(digests)] } })
      .toArray();
    const found = new Map(docs.map((doc) => [doc.digest, toRecord(doc)]));
    for (const [digest, record] of found) this.cache.remember(digest, record, mark);
    return digests.map((digest) => found.get(digest) ?? null);
  }

  async listInScope(scope: KeyScope): Promise<ApiKeyRecord[]> {
    const docs = await this.keys
      .find(scopeFilter(scope))
      .sort({ createdAt: 1 })
      .lean<ApiKeyDocument[]>()
      .exec();
    return docs.map(toRecord);
  }

  /** Deletes the key if it is in the scope; false when there is no such key in it. */
  async deleteInScope(scope: KeyScope, id: string): Promise<boolean> {
    if (!isObjectIdHex(id)) return false;
    const result = await this.keys.deleteOne({ _id: id, ...scopeFilter(scope) }).exec();
    this.cache.forget((key) => key.id === id);
    return result.deletedCount === 1;
  }

  async findById(id: string): Promise<ApiKeyRecord | null> {
    if (!isObjectIdHex(id)) return null;
    const doc = await this.keys.findById(id).lean<ApiKeyDocument>().exec();
    return doc ? toRecord(doc) : null;
  }

  /**
   * The keys with these ids that exist, in one command and never from the cache (the rights
   * check of open streams must see a revocation made through any instance).
   */
  async findManyById(ids: string[]): Promise<ApiKeyRecord[]> {
    const wanted = ids.filter(isObjectIdHex).map((id) => new Types.ObjectId(id));
    if (wanted.length === 0) return [];
    const docs = await this.keys.collection
      .find<ApiKeyDocument>({ _id: { $in: wanted } })
      .toArray();
    return docs.map(toRecord);
  }

  /** Deletes every key that acts as this sub profile; how many there were. */
  async deleteForProfile(subject: string, profileId: string): Promise<number> {
    const result = await this.keys.deleteMany({ subject, kind: 'sub', profileId }).exec();
    this.cache.forget(
      (key) => key.subject === subject && key.kind === 'sub' && key.profileId === profileId,
    );
    return result.deletedCount;
  }

  /** Deletes every key of a user or of a team (keysOf); how many there were. */
  async deleteAllOf(tenant: Tenant): Promise<number> {
    // An empty id would name every key of the other kind.
    if (tenant.id === '') throw new Error('deleteAllOf needs a subject or a team id');
    const keys = keysOf(tenant);
    const result = await this.keys.deleteMany(keys.filter).exec();
    this.cache.forget(keys.matches);
    return result.deletedCount;
  }

  /** The team's keys: team keys and the publishable keys it minted. */
  async listForTeam(teamId: string): Promise<ApiKeyRecord[]> {
    if (teamId === '') return [];
    const docs = await this.keys
      .find(keysOf({ kind: 'team', id: teamId }).filter)
      .sort({ createdAt: 1 })
      .lean<ApiKeyDocument[]>()
      .exec();
    return docs.map(toRecord);
  }

  /** Deletes a key of the team (team or publishable); false when the team has no such key. */
  async deleteForTeam(teamId: string, id: string): Promise<boolean> {
    if (!isObjectIdHex(id) || teamId === '') return false;
    const result = await this.keys.deleteOne({ _id: id, teamId }).exec();
    this.cache.forget((key) => key.id === id);
    return result.deletedCount === 1;
  }

  /** The key with this id if it is in the scope (the keys a manager may revoke or rotate). */
  async findInScope(scope: KeyScope, id: string): Promise<ApiKeyRecord | null> {
    if (!isObjectIdHex(id)) return null;
    const doc = await this.keys
      .findOne({ _id: id, ...scopeFilter(scope) })
      .lean<ApiKeyDocument>()
      .exec();
    return doc ? toRecord(doc) : null;
  }

  /** The key of the team (team or publishable) with this id, if the team has it. */
  async findForTeam(teamId: string, id: string): Promise<ApiKeyRecord | null> {
    if (!isObjectIdHex(id) || teamId === '') return null;
    const doc = await this.keys.findOne({ _id: id, teamId }).lean<ApiKeyDocument>().exec();
    return doc ? toRecord(doc) : null;
  }

  /**
   * Makes the key expire at `until` unless it expires sooner already (a rotated key's grace);
   * false when it no longer exists. This instance forgets it at once; another one within
   * API_KEY_CACHE_MS, as for a revocation.
   */
  async expireBy(id: string, until: Date): Promise<boolean> {
    const filter = {
      _id: new Types.ObjectId(id),
      $or: [{ expiresAt: null }, { expiresAt: { $gt: until } }],
    };
    await this.keys.collection.updateOne(filter, { $set: { expiresAt: until } });
    this.cache.forget((key) => key.id === id);
    return (await this.keys.exists({ _id: id }).exec()) !== null;
  }

  /**
   * Records the uses of several keys in one command; a use never moves lastUsedAt back (another
   * instance may have written a later one). Keys deleted meanwhile are left alone.
   */
  async recordUses(uses: readonly KeyUse[]): Promise<void> {
    if (uses.length === 0) return;
    await this.keys.collection.bulkWrite(
      uses.map(({ id, at }) => ({
        updateOne: {
          filter: {
            _id: new Types.ObjectId(id),
            $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: at } }],
          },
          update: { $set: { lastUsedAt: at } },
        },
      })),
      { ordered: false },
    );
  }

  /** Deletes the key with this id (a rotation's new key whose predecessor was revoked meanwhile). */
  async deleteById(id: string): Promise<void> {
    await this.keys.deleteOne({ _id: id }).exec();
    this.cache.forget((key) => key.id === id);
  }

  /** Whether the user has a key with this id, in any branch. */
  async existsForSubject(subject: string, id: string): Promise<boolean> {
    if (!isObjectIdHex(id)) return false;
    return (await this.keys.exists({ _id: id, subject }).exec()) !== null;
  }
}
