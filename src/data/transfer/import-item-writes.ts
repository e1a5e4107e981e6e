import type { CustomerPrincipal } from '../../auth';
import type { CollectionsService } from '../collections/collections.service';
import { newItemOf, type ItemsService } from '../items/items.service';
import type { NewItemRequest } from '../query/data-requests';
import type { SchemaError } from '../rules/schema/item-schemas';
import type { BatchItemResult, ImportBatches } from './import-batches';
import type { ItemReplacements } from './item-replacements';

/**
 * An import's item writes, each one write unit as a route's write is: the collection's registry
 * entry read once and passed through its move gate once (CollectionsService.write), then an item
 * alone (ItemsService.createIn; an upsert replaces a stored `_id` with ItemReplacements.replace),
 * or consecutive item lines of one collection together (ImportBatches).
 */
export class ImportItemWrites {
  constructor(
    private readonly collections: CollectionsService,
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
    return this.collections.write(principal, collection, async (found) => {
      if (upsert && request.id !== null && found) {
        const replaced = await this.replacements.replace(principal, collection, found, {
          ...request,
          id: request.id,
        });
        if (replaced)
          return { id: replaced.value._id, replaced: true, warnings: replaced.warnings };
      }
      const item = newItemOf(principal, request);
      const target = found ?? (await this.collections.register(principal, collection));
      const { item: created, warnings } = await this.creates.createIn(
        principal,
        collection,
        target,
        item,
      );
      return { id: created._id, replaced: false, warnings };
    });
  }

  /** Writes items of one collection together, answering each one's result in their order. */
  batch(
    principal: CustomerPrincipal,
    collection: string,
    requests: readonly NewItemRequest[],
    upsert: boolean,
  ): Promise<BatchItemResult[]> {
    return this.collections.writeCreating(principal, collection, (target) =>
      this.batches.create(principal, collection, target, requests, { replacing: upsert }),
    );
  }
}
