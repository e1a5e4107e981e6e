import type { CustomerPrincipal } from '../../auth';
import type { CollectionWriteGate } from '../collections/collection-write.gate';
import type { ItemsService } from '../items/items.service';
import type { NewItemRequest } from '../query/data-requests';
import type { SchemaError } from '../rules/schema/item-schemas';
import type { BatchItemResult, ImportBatches } from './import-batches';
import type { ItemReplacements } from './item-replacements';

/**
 * An import's item writes, each under the collection write gate as a route's write is: an item
 * alone (ItemsService.create; an upsert replaces a stored `_id` with ItemReplacements.replace),
 * or consecutive item lines of one collection together (ImportBatches).
 */
export class ImportItemWrites {
  constructor(
    private readonly gate: CollectionWriteGate,
    private readonly creates: ItemsService,
    private readonly replacements: ItemReplacements,
    private readonly batches: ImportBatches,
  ) {}

  /**
   * Writes one item: its `_id`, whether it replaced a stored one, and the warnings of a `warn`
   * schema it was written under.
   */
  one(
    principal: CustomerPrincipal,
    collection: string,
    request: NewItemRequest,
    upsert: boolean,
  ): Promise<{ id: string; replaced: boolean; warnings: SchemaError[] }> {
    return this.gate.around(principal, collection, async () => {
      if (upsert && request.id !== null) {
        const replaced = await this.replacements.replace(principal, collection, {
          ...request,
          id: request.id,
        });
        if (replaced)
          return { id: replaced.value._id, replaced: true, warnings: replaced.warnings };
      }
      const { item, warnings } = await this.creates.create(principal, collection, request);
      return { id: item._id, replaced: false, warnings };
    });
  }

  /** Writes items of one collection together, answering each one's result in their order. */
  batch(
    principal: CustomerPrincipal,
    collection: string,
    requests: readonly NewItemRequest[],
    upsert: boolean,
  ): Promise<BatchItemResult[]> {
    return this.gate.around(principal, collection, () =>
      this.batches.create(principal, collection, requests, { replacing: upsert }),
    );
  }
}
