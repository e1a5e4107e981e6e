import { Injectable } from '@nestjs/common';
import type { Collection } from 'mongodb';
import { DUPLICATE, orDuplicate, type Duplicate } from '../../../common/mongo/duplicate';
import { FallbackWriteQueue } from '../../../common/mongo/fallback-database';
import { TenantStorage, type NativeCollection } from '../../storage/tenant-storage';
import type { HeldPlace } from './item-places';

/** A place as stored: `_id` is `<physical>|<slot>`, so the database gives each slot out once. */
interface StoredPlace extends HeldPlace {
  _id: string;
  physical: string;
}

const PLACES = 'data_item_places';
const BY_ITEM = { name: 'physical_item', key: { physical: 1, itemId: 1 } } as const;

/**
 * The places of the item quota of each collection, kept beside it in `data_item_places` of the
 * database that holds it (as its uniqueField claims). Taking a place is an insert of its `_id`,
 * which MongoDB and FerretDB both decide atomically: the quota holds across instances. Deletes
 * name the item as well as the slot, so a place given out again meanwhile is never removed, and
 * run one at a time per slot in this process (FerretDB does not re-check a delete's filter at
 * write time; see fallback-database.ts).
 */
@Injectable()
export class ItemPlaceRepository {
  private readonly deletes = new FallbackWriteQueue();
  /** Databases whose places index this instance has made sure of. */
  private readonly indexed = new Map<string, Promise<unknown>>();

  constructor(private readonly storage: TenantStorage) {}

  private placesOf(target: NativeCollection): Collection<StoredPlace> {
    return this.storage.companionOf<StoredPlace>(target, PLACES);
  }

  /** The index that finds a collection's places and an item's, made once per database and instance. */
  private async ensureIndex(target: NativeCollection): Promise<void> {
    const key = `${target.cluster ?? ''}/${target.database ?? ''}`;
    let made = this.indexed.get(key);
    if (!made) {
      made = this.placesOf(target).createIndex(BY_ITEM.key, { name: BY_ITEM.name });
      this.indexed.set(key, made);
      // A failed attempt is tried again by the next place taken.
      made.catch(() => this.indexed.delete(key));
    }
    await made;
  }

  /** Every place of the collection: stored items and creates under way. */
  async held(target: NativeCollection): Promise<HeldPlace[]> {
    const docs = await this.placesOf(target)
      .find({ physical: target.physical }, { projection: { slot: 1, itemId: 1, claimedAt: 1 } })
      .maxTimeMS(this.storage.maxTimeMS)
      .toArray();
    return docs.map(({ slot, itemId, claimedAt }) => ({ slot, itemId, claimedAt }));
  }

  /** Takes `slot` for `itemId`; DUPLICATE when it is held already. */
  async take(
    target: NativeCollection,
    slot: number,
    itemId: string,
    claimedAt: Date,
  ): Promise<HeldPlace | Duplicate> {
    await this.ensureIndex(target);
    const place: StoredPlace = {
      _id: `${target.physical}|${slot}`,
      physical: target.physical,
      slot,
      itemId,
      claimedAt,
    };
    const created = await orDuplicate(() => this.placesOf(target).insertOne(place));
    return created === DUPLICATE ? DUPLICATE : { slot, itemId, claimedAt };
  }

  /** Gives the place back, unless it was taken back and given out again meanwhile. */
  release(target: NativeCollection, place: HeldPlace): Promise<void> {
    const _id = `${target.physical}|${place.slot}`;
    return this.deletes.run(_id, async () => {
      await this.placesOf(target).deleteOne({
        _id,
        itemId: place.itemId,
        claimedAt: place.claimedAt,
      });
    });
  }

  /** Gives back the places of items that were just deleted. */
  async releaseItems(target: NativeCollection, itemIds: readonly string[]): Promise<void> {
    if (itemIds.length === 0) return;
    await this.placesOf(target).deleteMany(
      { physical: target.physical, itemId: { $in: [...itemIds] } },
      { maxTimeMS: this.storage.maxTimeMS },
    );
  }

  /** Deletes every place of a dropped (or moved away) collection. */
  async deleteForCollection(target: NativeCollection): Promise<void> {
    await this.placesOf(target).deleteMany({ physical: target.physical });
  }
}
