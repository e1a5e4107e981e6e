import { Injectable } from '@nestjs/common';
import type { Document } from 'mongodb';
import type { ItemMatch } from '../query/data-query';
import { itemFilter } from '../rules/expiry/live-items';
import { TenantStorage, type NativeCollection } from '../storage/tenant-storage';

/** The reads of item analyses (grouped counts and sums), under the query time limit. */
@Injectable()
export class AnalysisRepository {
  constructor(private readonly storage: TenantStorage) {}

  /** Runs a pipeline the service built (aggregate.ts); the client never supplies a stage. */
  async aggregate(target: NativeCollection, pipeline: Document[]): Promise<Document[]> {
    return this.storage
      .itemsOf(target)
      .aggregate(pipeline, { maxTimeMS: this.storage.maxTimeMS })
      .toArray();
  }

  /** The matching items' group and value fields, in group-key order (for groupInProcess). */
  scanGroups(
    target: NativeCollection,
    match: ItemMatch,
    groupBy: string,
    field: string,
  ): AsyncIterable<Document> {
    // One path inside the other ("a" and "a.b") would be a projection collision: keep the outer.
    const [outer, inner] = groupBy.length <= field.length ? [groupBy, field] : [field, groupBy];
    const paths = inner === outer || inner.startsWith(`${outer}.`) ? [outer] : [groupBy, field];
    const projection = { _id: 0, ...Object.fromEntries(paths.map((path) => [path, 1])) };
    return this.storage
      .itemsOf(target)
      .find(itemFilter(target, match), { projection })
      .sort({ [groupBy]: 1 })
      .maxTimeMS(this.storage.maxTimeMS);
  }
}
