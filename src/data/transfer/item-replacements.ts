import { Inject, Injectable } from '@nestjs/common';
import { ownerValueOf, type CustomerPrincipal } from '../../auth';
import { DUPLICATE, type Duplicate } from '../../common/mongo/duplicate';
import { FallbackWriteQueue } from '../../common/mongo/fallback-database';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import { toItemJson } from '../items/dto/data-item.dto';
import { DuplicateItemError, WriteConflictError } from '../data.errors';
import { ItemEvents } from '../items/item-events';
import { ownerScopeOf } from '../items/item-scope';
import { MODIFY_ROUNDS, writeKey } from '../items/item-write-queue';
import { ItemsRepository } from '../items/items.repository';
import type { StoredItem } from '../storage/tenant-storage';
import { uniqueValueOf } from '../items/items.service';
import type { ItemMatch } from '../query/data-query';
import type { NewItemRequest } from '../query/data-requests';
import { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import type { Warned } from '../rules/schema/schema-warnings';
import { TransferItemsRepository } from './transfer-items.repository';
import { accessPlanOf } from '../access/access-plan';
import {
  matchScopeOf,
  outsideRule,
  refuseProtectedItem,
  takenError,
  visibleWarnings,
} from '../items/item-access';
import { APP_CONFIG, type AppConfig } from '../../config';
import { wordsFor } from '../search/search-rule';

/** Upserts of an import: an item replaced whole by `_id`, under the rules of a write. */
@Injectable()
export class ItemReplacements {
  constructor(
    private readonly items: ItemsRepository,
    private readonly transfers: TransferItemsRepository,
    private readonly itemEvents: ItemEvents,
    /** Shared with ItemWritesService: one item's writes queue behind each other. */
    private readonly writes: FallbackWriteQueue,
    private readonly schema: SchemaEnforcement,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * An import's upsert of an item that exists in the caller's scope (`request.id`), in `target`
   * (the collection of the import's write unit, through its move gate): replaces it
   * whole — its fields, its times when the import carries them (else it keeps `_createdAt` and is
   * updated now) — under the rules of a write: a uniqueField value another item holds is refused,
   * the write is counted and makes an `updated` event. Answers the item with the warnings of a
   * `warn` schema; null when no item with this id is in the caller's scope (the caller creates
   * it). Under the collection's access rules the item must be readable (else it is not in the
   * caller's scope), inside the update rule before and as it will be (403 ACCESS_RULE), and set
   * no protected field; the replacement is made at the revision judged.
   */
  async replace(
    principal: CustomerPrincipal,
    collection: string,
    target: RegisteredCollection,
    request: NewItemRequest & { id: string },
  ): Promise<Warned<StoredItem> | null> {
    const { id, item, ownerField, uniqueField } = request;
    if (principal.kind === 'sub') item[ownerField] = ownerValueOf(principal);
    const plan = accessPlanOf(principal, target, ownerField);
    refuseProtectedItem(plan, item);
    const warnings = visibleWarnings(plan, this.schema.enforce(target, item, ownerField));
    // The replacement's word list under a search configuration (413 before anything is written).
    const hidden = wordsFor(target, item, this.config.limits.searchMaxWordsPerItem);
    const scope = ownerScopeOf(principal, ownerField);
    const byId: ItemMatch = {
      scope: matchScopeOf(plan.read),
      conditions: [{ kind: 'eq', path: '_id', anyOf: [id] }],
    };
    const unique = uniqueField === null ? null : uniqueValueOf(item, id, uniqueField);
    return this.writes.run(writeKey(target.physical, id), async () => {
      for (let round = 0; round < MODIFY_ROUNDS; round += 1) {
        const [current] = await this.items.findMatching(target, byId, 1);
        if (!current) return null;
        if (uniqueField !== null && unique !== null) {
          const holder = await this.items.findIdByValue(target, scope, uniqueField, unique);
          if (holder !== null && holder !== id)
            throw await takenError(this.items, target, plan, uniqueField, holder);
        }
        const times = request.imported?.times ?? {
          createdAt: current._createdAt,
          updatedAt: new Date(),
        };
        const replacement = {
          ...item,
          _id: id,
          _createdAt: times.createdAt,
          _updatedAt: times.updatedAt,
        };
        if (!plan.update.matches(current) || !plan.update.matches(replacement))
          throw outsideRule('update');
        const change = await this.itemEvents.beginUpdate(principal, collection, [id], ownerField);
        let replaced: StoredItem | null | Duplicate;
        try {
          replaced = await this.transfers.replaceAtRevision(
            target,
            current,
            byId.scope,
            item,
            times,
            hidden,
          );
          if (replaced === DUPLICATE)
            throw new DuplicateItemError(
              'A unique index of the collection refuses the item; nothing was changed.',
            );
        } catch (error) {
          await change.failed(error);
          throw error;
        }
        // Changed since it was read: no write, no event; read it again. The item replaced is
        // the one read: a live query judges the change by it.
        await change.commit({
          after: replaced === null ? [] : [toItemJson(replaced)],
          before: [current],
        });
        if (replaced) return { value: replaced, warnings };
      }
      throw new WriteConflictError();
    });
  }
}
