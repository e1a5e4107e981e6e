import { Injectable } from '@nestjs/common';
import { tenantOf, type CustomerPrincipal } from '../../auth';
import { DUPLICATE } from '../../common/mongo/duplicate';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import { CollectionsService } from '../collections/collections.service';
import type { IndexRequest } from '../query/index-requests';
import {
  CollectionNotFoundError,
  IndexConflictError,
  IndexNotFoundError,
  ProtectedIndexError,
  UniqueIndexDuplicatesError,
} from '../data.errors';
import { TenantStorage, type CreateIndexResult, type IndexInfo } from '../storage/tenant-storage';
import { IndexQuota } from './index-quota';
import { WORDS_INDEX } from '../search/search-rule';

function sameFields(a: Record<string, number>, b: Record<string, number>): boolean {
  const left = Object.entries(a);
  const right = Object.entries(b);
  return (
    left.length === right.length &&
    left.every(([field, dir], i) => right[i]?.[0] === field && Number(right[i]?.[1]) === dir)
  );
}

/** Native indexes of the caller's collections: idempotent creation, conflicts and the quota. */
@Injectable()
export class IndexesService {
  constructor(
    private readonly collections: CollectionsService,
    private readonly storage: TenantStorage,
    private readonly quota: IndexQuota,
  ) {}

  async list(principal: CustomerPrincipal, collection: string): Promise<IndexInfo[]> {
    const target = await this.collections.find(principal, collection);
    return target ? this.storage.listIndexes(target) : [];
  }

  /** GET /data/{c}/stats: items, indexes and data size of the collection; 404 when it does not exist. */
  async stats(
    principal: CustomerPrincipal,
    collection: string,
  ): Promise<{ count: number; indexes: number; sizeBytes: number }> {
    const target = await this.collections.find(principal, collection);
    if (!target) throw new CollectionNotFoundError(collection);
    const [stats, indexes] = await Promise.all([
      this.storage.stats(target),
      this.storage.listIndexes(target),
    ]);
    return { count: stats.count, indexes: indexes.length, sizeBytes: stats.sizeBytes };
  }

  /**
   * Creates the index, or returns the existing one when the same index exists already (also
   * under another name when the request names none). Within the quota exactly, under any
   * concurrency: the index is built only after its name holds one of the slots below the
   * tenant's `indexesPerCollection` (IndexQuota).
   */
  async create(
    principal: CustomerPrincipal,
    collection: string,
    request: IndexRequest,
  ): Promise<IndexInfo> {
    return this.collections.writeCreating(principal, collection, (target) =>
      this.createIn(principal, target, request),
    );
  }

  private async createIn(
    principal: CustomerPrincipal,
    target: RegisteredCollection,
    request: IndexRequest,
  ): Promise<IndexInfo> {
    const { name, fields, unique } = request;
    const existing = await this.storage.listIndexes(target);
    const byName = existing.find((i) => i.name === name);
    if (byName) {
      if (sameFields(byName.fields, fields) && byName.unique === unique) return byName;
      throw new IndexConflictError(`An index named '${name}' exists with another definition.`);
    }
    const byFields = existing.find((i) => sameFields(i.fields, fields));
    if (byFields) {
      if (!request.named && byFields.unique === unique) return byFields;
      throw new IndexConflictError(
        `An index on these fields exists already as '${byFields.name}'.`,
      );
    }

    const claim = await this.quota.claim(tenantOf(principal), target, name, existing);
    // Only a slot this request claimed is given back; a 'held' one belongs to a concurrent
    // request creating the same index.
    const releaseClaim = () =>
      claim === 'claimed' ? this.quota.release(target, name) : Promise.resolve();
    let result: CreateIndexResult;
    try {
      result = await this.storage.createIndex(target, name, fields, unique);
    } catch (error) {
      await releaseClaim();
      throw error;
    }
    if (result === 'created') return { name, fields, unique };
    await releaseClaim();
    if (result === DUPLICATE) throw new UniqueIndexDuplicatesError();
    throw new IndexConflictError(
      `An index named '${name}' or on these fields was created concurrently with another definition.`,
    );
  }

  async remove(principal: CustomerPrincipal, collection: string, name: string): Promise<void> {
    if (name === '_id_') throw new ProtectedIndexError();
    if (name === WORDS_INDEX)
      throw new ProtectedIndexError(
        `The ${WORDS_INDEX} index belongs to the search configuration: DELETE /data/${collection}/search removes it.`,
      );
    await this.collections.write(principal, collection, async (target) => {
      const existing = target ? await this.storage.listIndexes(target) : [];
      if (!target || !existing.some((i) => i.name === name))
        throw new IndexNotFoundError(collection, name);
      await this.storage.dropIndex(target, name);
      await this.quota.release(target, name);
    });
  }
}
