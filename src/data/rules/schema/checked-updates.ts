import { Inject, Injectable } from '@nestjs/common';
import type { CustomerPrincipal } from '../../../auth';
import { ValidationFailedError } from '../../../common/errors';
import { DUPLICATE } from '../../../common/mongo/duplicate';
import { FallbackWriteQueue } from '../../../common/mongo/fallback-database';
import { APP_CONFIG, type AppConfig } from '../../../config';
import { AccessRuleError, DuplicateItemError } from '../../data.errors';
import type { ItemScope } from '../../access/access-plan';
import { toItemJson } from '../../items/dto/data-item.dto';
import { ItemEvents } from '../../items/item-events';
import { itemETag, revisionCondition, tagOf } from '../../items/item-revision';
import { holdingItems } from '../../items/item-write-queue';
import { ItemsRepository } from '../../items/items.repository';
import { writesWords } from '../../items/item-writes.service';
import { wordsFor } from '../../search/search-rule';
import type { ItemMatch } from '../../query/data-query';
import type { ItemChangeRequest } from '../../query/data-requests';
import type { NativeCollection, StoredItem } from '../../storage/tenant-storage';
import { afterSet } from './after-set';
import { SchemaEnforcement } from './schema-enforcement';
import type { Warned } from './schema-warnings';

/** Items read and written per round (and per change-feed intent). */
const ROUND = 500;

/**
 * A multi-item update (PUT with `multi: true`) of a collection with a schema or an update rule
 * other than the read rule, or that writes a search field (each item's word list is made from it
 * as it will be and stored in its own write): every matched item, before and as it will be, is checked before any
 * is written, and one that would break the schema or fall outside the rule (403 ACCESS_RULE)
 * refuses the whole update. The items' write queues are held from the read to the last write,
 * so no other write of this instance changes them in between; each is then written only at the
 * revision checked (on MongoDB that holds across instances too). At most SCHEMA_MULTI_UPDATE_MAX
 * items are updated so.
 */
@Injectable()
export class CheckedUpdates {
  private readonly max: number;
  private readonly maxWords: number;

  constructor(
    private readonly items: ItemsRepository,
    private readonly itemEvents: ItemEvents,
    private readonly writes: FallbackWriteQueue,
    private readonly schema: SchemaEnforcement,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.max = config.limits.schemaMultiUpdateMax;
    this.maxWords = config.limits.searchMaxWordsPerItem;
  }

  async updateMany(
    principal: CustomerPrincipal,
    collection: string,
    target: NativeCollection,
    match: ItemMatch,
    request: ItemChangeRequest,
    rule: ItemScope,
  ): Promise<Warned<{ matched: number; modified: number }>> {
    const ids = await this.items.findMatchingIds(target, match, this.max + 1, { inIdOrder: true });
    if (ids.length > this.max)
      throw new ValidationFailedError([
        {
          field: 'filter',
          message: `matches more than ${this.max} items: an update of a collection with a schema or an update rule, or of a search field, changes at most that many at once (SCHEMA_MULTI_UPDATE_MAX)`,
        },
      ]);
    return holdingItems(this.writes, target.physical, ids, async () => {
      const read: StoredItem[] = [];
      for (let at = 0; at < ids.length; at += ROUND) {
        const round = ids.slice(at, at + ROUND);
        const byIds = {
          ...match,
          conditions: [{ kind: 'eq' as const, path: '_id', anyOf: round }, ...match.conditions],
        };
        read.push(...(await this.items.findMatching(target, byIds, round.length)));
      }
      const { values, ownerField } = request;
      const now = new Date();
      const afters = read.map((item) => afterSet(item, values));
      // The update rule, before and after, for every item before any is written.
      if (
        read.some((item) => !rule.matches(item)) ||
        afters.some((after) => !rule.matches({ ...after, _updatedAt: now }))
      )
        throw new AccessRuleError(
          "The collection's access rules do not let this key update every matching item as it would be; nothing was changed.",
        );
      const warnings = this.schema.enforceAll(target, afters, ownerField);
      // Values that write a search field: each item's word list as it will be (one item past
      // the cap refuses the whole update, 413, before any is written).
      const words = writesWords(target, Object.keys(values));
      const hidden = afters.map((after) => (words ? wordsFor(target, after, this.maxWords) : {}));
      let modified = 0;
      for (let at = 0; at < read.length; at += ROUND) {
        const round = read.slice(at, at + ROUND);
        const change = await this.itemEvents.beginUpdate(
          principal,
          collection,
          round.map((item) => item._id),
          ownerField,
        );
        let refused = false;
        const written: StoredItem[] = [];
        try {
          for (const [offset, item] of round.entries()) {
            const atRead = { ...match, revision: revisionCondition(tagOf(itemETag(item))) };
            const words = hidden[at + offset];
            const result = await this.items.updateById(
              target,
              item._id,
              atRead,
              values,
              now,
              words,
            );
            if (result === DUPLICATE) {
              refused = true;
              break;
            }
            // Null: changed by another instance since it was read (on FerretDB it is written anyway).
            if (result) written.push(result);
          }
        } catch (error) {
          await change.failed(error);
          throw error;
        }
        await change.commit({ after: written.map((item) => toItemJson(item)), before: round });
        modified += written.length;
        if (refused)
          throw new DuplicateItemError(
            'A unique index of the collection refuses the new values of a matching item; the items written before it keep their new values.',
          );
      }
      return { value: { matched: read.length, modified }, warnings };
    });
  }
}
