import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { namespaceOf } from '../../../common/tenancy/namespace';
import { CollectionRegistryDocument } from '../../collections/collection-registry.schema';
import { toEntry } from '../../collections/registered-collection';
import type { ExpiringCollection } from './item-expiry';

/**
 * The registry entries that have an expiry rule, with their namespaces: what the expiry sweep
 * visits. Read from the registry itself (never a cache), through the `rules_expiry` index.
 */
@Injectable()
export class ExpiringCollectionsRepository {
  constructor(
    @InjectModel(CollectionRegistryDocument.name)
    private readonly registry: Model<CollectionRegistryDocument>,
  ) {}

  /** Every collection with an expiry rule, read batch by batch as the caller iterates. */
  async *all(batchSize: number): AsyncGenerator<ExpiringCollection> {
    const cursor = this.registry
      .find({ 'rules.expiry.afterSeconds': { $gte: 1 } })
      .lean<CollectionRegistryDocument>()
      .cursor({ batchSize });
    try {
      for await (const doc of cursor) {
        const { kind, id, branch } = namespaceOf(doc);
        yield { tenant: { kind, id }, branch, entry: toEntry(doc) };
      }
    } finally {
      await cursor.close();
    }
  }
}
