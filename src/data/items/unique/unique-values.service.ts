import { Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { DatabaseUnavailableError } from '../../../common/errors';
import { DUPLICATE } from '../../../common/mongo/duplicate';
import type { OwnerScope } from '../../query/data-query';
import { DuplicateItemError } from '../../data.errors';
import type { NativeCollection } from '../../storage/tenant-storage';
import { ItemsRepository } from '../items.repository';
import { type JsonScalar } from '../../../common/json';
import { UniqueClaimRepository, type UniqueClaim } from './unique-claim.repository';

/**
 * A claim whose item does not exist is taken over after this long: its create died between the
 * claim and the item's insert. A create gives up (503) when it reaches half of it before its
 * insert, so the other half is the margin for clocks of instances that differ.
 */
export const CLAIM_GRACE_MS = 60_000;

/** How often a create tries again when the claims it meets keep changing under it. */
const CLAIM_ROUNDS = 3;

/** One `uniqueField` value of one create, in the caller's scope (see ItemsService.create). */
export interface UniqueValue {
  /** The collection: its physical name is part of the claim, its location finds the holder. */
  target: NativeCollection;
  /** The caller's scope: a sub caller's own items, or (null) the whole namespace. */
  scope: OwnerScope | null;
  field: string;
  value: JsonScalar;
}

/**
 * `uniqueField` under any concurrency, with or without an index on the field: a create first
 * claims its value — inserts a document whose `_id` is derived from (collection, scope, field,
 * value) — and inserts its item only while it holds the claim. Concurrent creates of one value
 * insert the same `_id`, and the database lets one through, on MongoDB and FerretDB alike.
 *
 * A claim stands for its item, and is checked against it when another create meets it: the item
 * holds the value (in the scope) → 409 naming it; the item does not exist yet and the claim is
 * younger than CLAIM_GRACE_MS → a create is in progress, 409 naming the item it is creating;
 * otherwise the claim is stale and is taken over. So a value is free again as soon as its item
 * no longer holds it (changed by a PUT: nothing to release), at once when the item is deleted,
 * and CLAIM_GRACE_MS after a create that died between claim and insert.
 *
 * A delete marks its items' claims before it deletes them (`beforeDelete`) and gives them back
 * after (`afterDelete`). A marked claim whose item is gone is stale: a create that comes between
 * the delete and the give-back takes it over, rather than take it for a create in progress.
 */
@Injectable()
export class UniqueValuesService {
  constructor(
    private readonly claims: UniqueClaimRepository,
    private readonly items: ItemsRepository,
  ) {}

  /**
   * Claims the value for the item `itemId` about to be inserted, or throws DuplicateItemError.
   * The caller inserts the item, checking `assertInsertable` right before, and releases the
   * claim when the insert does not happen.
   */
  async claim(unique: UniqueValue, itemId: string, now = new Date()): Promise<UniqueClaim> {
    const key = claimKey({ ...unique, physical: unique.target.physical });
    for (let round = 0; round < CLAIM_ROUNDS; round += 1) {
      const mine: UniqueClaim = {
        key,
        target: unique.target,
        itemId,
        token: randomBytes(12).toString('hex'),
        claimedAt: now,
        releasing: false,
      };
      if ((await this.claims.insert(mine)) !== DUPLICATE) return mine;
      const held = await this.claims.find(unique.target, key);
      // Released between the insert and the read: try again.
      if (!held) continue;
      if (!(await this.isStale(held, unique, now)))
        throw DuplicateItemError.taken(unique.field, held.itemId);
      if ((await this.claims.replace(held, mine)) !== DUPLICATE) return mine;
    }
    throw new DuplicateItemError(
      `Other requests are creating items with this ${unique.field}; retry.`,
    );
  }

  /**
   * Refuses to insert with a claim past half its grace (a database so slow that another create
   * may soon take the claim over): the claim is released and the request answers 503.
   */
  async assertInsertable(claim: UniqueClaim, now = Date.now()): Promise<void> {
    if (now - claim.claimedAt.getTime() < CLAIM_GRACE_MS / 2) return;
    await this.release(claim);
    throw new DatabaseUnavailableError();
  }

  /** Gives back a claim whose item was not inserted. */
  release(claim: UniqueClaim): Promise<void> {
    return this.claims.release(claim);
  }

  /**
   * Before items are deleted: their claims, each marked as going with its item. No command but
   * the read when the items claimed nothing.
   */
  async beforeDelete(
    target: NativeCollection,
    itemIds: readonly string[],
  ): Promise<readonly UniqueClaim[]> {
    if (itemIds.length === 0) return [];
    const claims = await this.claims.findForItems(target, itemIds);
    await Promise.all(claims.map((claim) => this.claims.markReleasing(claim)));
    return claims;
  }

  /**
   * After the delete: gives back the claims (from `beforeDelete`) of the items that went. Those
   * of items that stayed keep their mark, which counts only once the item is gone.
   */
  async afterDelete(claims: readonly UniqueClaim[], gone: readonly string[]): Promise<void> {
    if (claims.length === 0) return;
    const went = new Set(gone);
    for (const claim of claims) if (went.has(claim.itemId)) await this.claims.release(claim);
  }

  /** Whether a claim met by a create no longer protects anything (see the class comment). */
  private async isStale(held: UniqueClaim, unique: UniqueValue, now: Date): Promise<boolean> {
    const fields = unique.scope ? [unique.field, unique.scope.field] : [unique.field];
    const holder = await this.items.findFieldsById(unique.target, held.itemId, fields);
    if (!holder)
      return held.releasing || now.getTime() - held.claimedAt.getTime() >= CLAIM_GRACE_MS;
    const holdsValue = holder[unique.field] === unique.value;
    const inScope = unique.scope === null || holder[unique.scope.field] === unique.scope.value;
    return !(holdsValue && inScope);
  }
}

/**
 * The claim `_id` of a value: a digest, so that values of any length make short ids. The JSON
 * encoding keeps the type (`1`, `"1"` and `true` are different values) and the scope is part of
 * it, because uniqueness is checked in the caller's scope.
 */
export function claimKey({
  physical,
  scope,
  field,
  value,
}: Omit<UniqueValue, 'target'> & { physical: string }): string {
  const parts = [physical, scope?.field ?? null, scope?.value ?? null, field, value];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
