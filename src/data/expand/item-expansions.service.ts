import { Inject, Injectable } from '@nestjs/common';
import { type CustomerPrincipal, readableBy } from '../../auth';
import { accessPlanOf, type AccessPlan } from '../access/access-plan';
import { protectedPathOf, withoutProtected } from '../access/protected-fields';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import { CollectionsService } from '../collections/collections.service';
import { ProtectedFieldError } from '../data.errors';
import { toItemJson, type DataItemDto } from '../items/dto/data-item.dto';
import { ItemsRepository } from '../items/items.repository';
import { readMatchOf } from '../items/item-scope';
import { DEFAULT_OWNER_FIELD } from '../query/data.constants';
import { APP_CONFIG, type AppConfig } from '../../config';
import { type Expansion } from './expand-request';
import { referenceIds, withReferences } from './references';

/**
 * An expansion with what the caller may read of its collection: the registry entry (null: no
 * such collection) and the caller's access plan there (null: the key may not read it). Every
 * reference of an expansion without both expands to null.
 */
export interface PreparedExpansion {
  expansion: Expansion;
  target: RegisteredCollection | null;
  access: AccessPlan | null;
}

/**
 * `expand` on reads (docs/data.md, "Expanding references"): after the page is read, one query per
 * expansion for the whole page — `_id` in the page's ids, ANDed with the target collection's read
 * rule for the caller and its expiry — and each reference replaced by the item as JSON (its
 * protected fields left out) or null. Expanded items are not expanded again.
 */
@Injectable()
export class ItemExpansions {
  constructor(
    private readonly collections: CollectionsService,
    private readonly items: ItemsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Reads each target's registry entry and access plan before the page is read, and refuses
   * (400 PROTECTED_FIELD) a `fields` path below an expansion that names a field the target's
   * rules hide from the caller. A collection the key may not read is no error: its references
   * expand to null, as items it may not read do.
   */
  async prepare(
    principal: CustomerPrincipal,
    expansions: readonly Expansion[],
  ): Promise<PreparedExpansion[]> {
    const readable = readableBy(principal);
    return Promise.all(
      expansions.map(async (expansion): Promise<PreparedExpansion> => {
        if (readable && !readable(expansion.collection))
          return { expansion, target: null, access: null };
        const target = await this.collections.find(principal, expansion.collection);
        // The request's authField names the main collection's owner field; a target's is the default.
        const access = accessPlanOf(principal, target, DEFAULT_OWNER_FIELD);
        for (const path of expansion.projection?.paths ?? [])
          if (protectedPathOf(access, path) !== null)
            throw new ProtectedFieldError('fields', `${expansion.path}.${path}`);
        return { expansion, target, access };
      }),
    );
  }

  /** The items with their references expanded: one query per expansion whose page holds ids. */
  async expand(
    prepared: readonly PreparedExpansion[],
    items: DataItemDto[],
  ): Promise<DataItemDto[]> {
    // Ids one item may hold at one path (an id, an array, the ids of one array's elements): an
    // item holding more keeps them as they are, so a query names at most limit × this many.
    const maxIds = this.config.limits.expandMaxIdsPerItem;
    let result = items as unknown as Record<string, unknown>[];
    for (const { expansion, target, access } of prepared) {
      const perItem = result.map((item) => referenceIds(item, expansion.path));
      const ids = new Set<string>();
      for (const each of perItem) if (each.length <= maxIds) for (const id of each) ids.add(id);
      if (ids.size === 0) continue;
      const found = await this.read(target, access, expansion, [...ids]);
      result = result.map((item, i) =>
        (perItem[i]?.length ?? 0) > maxIds
          ? item
          : withReferences(item, expansion.path, (id) => found.get(id) ?? null),
      );
    }
    return result as unknown as DataItemDto[];
  }

  /** The readable items of `ids` in the target, as JSON by id; no query when none can be. */
  private async read(
    target: RegisteredCollection | null,
    access: AccessPlan | null,
    expansion: Expansion,
    ids: string[],
  ): Promise<Map<string, DataItemDto>> {
    const found = new Map<string, DataItemDto>();
    if (!target || !access || access.read.none) return found;
    const match = readMatchOf(access, [{ kind: 'eq', path: '_id', anyOf: ids }]);
    const stored = await this.items.findMatching(target, match, ids.length, expansion.projection);
    for (const item of stored) found.set(item._id, toItemJson(withoutProtected(access, item)));
    return found;
  }
}
