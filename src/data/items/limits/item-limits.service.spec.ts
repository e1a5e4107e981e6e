import { DUPLICATE, type Duplicate } from '../../../common/mongo/duplicate';
import type { ActiveLimits, TenantLimits } from '../../../plans';
import type { NativeCollection } from '../../storage/tenant-storage';
import type { ItemsRepository } from '../items.repository';
import { ItemLimits } from './item-limits.service';
import type { ItemPlaceRepository } from './item-place.repository';
import { PLACE_GRACE_MS, type HeldPlace } from './item-places';

/**
 * The decisions of ItemLimits over in-memory places and items (the database's part, unique
 * inserts across instances, is tested on a real database: item-limits e2e).
 */
const TARGET: NativeCollection = { physical: 'd_1' };
const TENANT = { kind: 'user', id: 'u1' } as const;
const NOW = new Date('2026-01-01T00:00:00Z');

function limitsOf(max: number | null, plan: string | null = null): TenantLimits {
  const active = {
    plan: plan === null ? null : { name: plan, since: NOW, until: null },
    limits: { itemsPerCollection: max },
  } as ActiveLimits;
  return { of: () => Promise.resolve(active) };
}

function setup(max: number | null, plan: string | null = null) {
  const places = new Map<number, HeldPlace>();
  const stored = new Set<string>();
  /** What another instance does at a chosen point of a create: once, then forgotten. */
  const between: { afterPlacesRead?: () => void; beforeIdsRead?: () => void } = {};
  let reads = 0;
  const placeRepository = {
    held: () => {
      reads += 1;
      const read = [...places.values()];
      const then = between.afterPlacesRead;
      delete between.afterPlacesRead;
      then?.();
      return Promise.resolve(read);
    },
    take: (_t: NativeCollection, slot: number, itemId: string, claimedAt: Date) => {
      if (places.has(slot)) return Promise.resolve<Duplicate>(DUPLICATE);
      const place = { slot, itemId, claimedAt };
      places.set(slot, place);
      return Promise.resolve(place);
    },
    release: (_t: NativeCollection, place: HeldPlace) => {
      if (places.get(place.slot)?.itemId === place.itemId) places.delete(place.slot);
      return Promise.resolve();
    },
    releaseItems: (_t: NativeCollection, ids: readonly string[]) => {
      for (const [slot, place] of places) if (ids.includes(place.itemId)) places.delete(slot);
      return Promise.resolve();
    },
  } as unknown as ItemPlaceRepository;
  const items = {
    estimatedCount: () => Promise.resolve(stored.size),
    findMatchingIds: () => {
      const then = between.beforeIdsRead;
      delete between.beforeIdsRead;
      then?.();
      return Promise.resolve([...stored].sort());
    },
    existingIds: (_t: NativeCollection, ids: string[]) =>
      Promise.resolve(new Set(ids.filter((id) => stored.has(id)))),
  } as unknown as ItemsRepository;
  const limits = new ItemLimits(limitsOf(max, plan), placeRepository, items);
  /** A create as ItemsService.createIn makes it: a place, then the item. */
  const create = async (id: string, now = NOW) => {
    const taken = await limits.take(TENANT, TARGET, id, now);
    stored.add(id);
    return taken;
  };
  /** A create through another instance: its place, then its item. */
  const elsewhere = (slot: number, id: string) => () => {
    places.set(slot, { slot, itemId: id, claimedAt: NOW });
    stored.add(id);
  };
  return { limits, places, stored, create, between, elsewhere, reads: () => reads };
}

it('reads and writes nothing without a limit', async () => {
  const { limits, places, reads } = setup(null);
  expect(await limits.take(TENANT, TARGET, 'a', NOW)).toBeNull();
  await limits.deleted(TENANT, TARGET, ['a']);
  expect(reads()).toBe(0);
  expect(places.size).toBe(0);
});

it('refuses the create past the limit with ITEM_QUOTA_EXCEEDED without a plan', async () => {
  const { limits, create } = setup(2);
  await create('a');
  await create('b');
  await expect(limits.take(TENANT, TARGET, 'c', NOW)).rejects.toMatchObject({
    code: 'ITEM_QUOTA_EXCEEDED',
    extensions: { limit: 'itemsPerCollection', max: 2, usage: 2, plan: null },
  });
});

it("refuses it with PLAN_LIMIT_EXCEEDED naming the tenant's plan", async () => {
  const { limits, create } = setup(1, 'starter');
  await create('a');
  await expect(limits.take(TENANT, TARGET, 'b', NOW)).rejects.toMatchObject({
    code: 'PLAN_LIMIT_EXCEEDED',
    extensions: { limit: 'itemsPerCollection', max: 1, usage: 1, plan: 'starter' },
  });
});

it('gives the place of a deleted item to the next create', async () => {
  const { limits, places, stored, create } = setup(2);
  await create('a');
  await create('b');
  stored.delete('a');
  await limits.deleted(TENANT, TARGET, ['a']);
  expect((await create('c'))?.place.slot).toBe(0);
  expect([...places.values()].map((p) => p.itemId).sort()).toEqual(['b', 'c']);
});

it('places the items stored without a limit before it counts, beyond the limit', async () => {
  const { limits, places, stored } = setup(2);
  for (const id of ['x', 'y', 'z']) stored.add(id);
  await expect(limits.take(TENANT, TARGET, 'new', NOW)).rejects.toMatchObject({
    extensions: { usage: 3 },
  });
  expect([...places.keys()].sort()).toEqual([0, 1, 2]);
});

it('takes back a place whose item never came, once its grace is over', async () => {
  const { limits, places, create } = setup(2);
  await create('a');
  // A create that died after its place: no item.
  await limits.take(TENANT, TARGET, 'lost', NOW);
  await expect(limits.take(TENANT, TARGET, 'b', NOW)).rejects.toMatchObject({
    code: 'ITEM_QUOTA_EXCEEDED',
  });
  const later = new Date(NOW.getTime() + PLACE_GRACE_MS);
  expect((await create('b', later))?.place.slot).toBe(1);
  expect([...places.values()].map((p) => p.itemId).sort()).toEqual(['a', 'b']);
});

it('refuses creates under a lowered limit while the places held reach it, though a low slot is free', async () => {
  const { limits, places, stored } = setup(2);
  // Placed under a limit of 4; slot 0's item was deleted since.
  for (const [slot, id] of [
    [1, 'b'],
    [2, 'c'],
    [3, 'd'],
  ] as const) {
    places.set(slot, { slot, itemId: id, claimedAt: NOW });
    stored.add(id);
  }
  await expect(limits.take(TENANT, TARGET, 'new', NOW)).rejects.toMatchObject({
    extensions: { max: 2, usage: 3 },
  });
  for (const id of ['b', 'c']) {
    stored.delete(id);
    await limits.deleted(TENANT, TARGET, [id]);
  }
  // One item (slot 3, above the limit): a create fits, the next does not.
  expect((await limits.take(TENANT, TARGET, 'new', NOW))?.place.slot).toBe(0);
  stored.add('new');
  await expect(limits.take(TENANT, TARGET, 'newer', NOW)).rejects.toMatchObject({
    extensions: { max: 2, usage: 2 },
  });
});

it('does not place twice the item of a concurrent create stored just after it read the places', async () => {
  const { places, create, between, elsewhere } = setup(3);
  between.afterPlacesRead = elsewhere(0, 'other');
  expect((await create('mine'))?.place.slot).toBe(1);
  expect([...places.values()].map((p) => p.itemId).sort()).toEqual(['mine', 'other']);
});

it('places the items stored without a limit, but not one a concurrent create placed meanwhile', async () => {
  const { places, stored, create, between, elsewhere } = setup(3);
  stored.add('legacy');
  between.beforeIdsRead = elsewhere(0, 'other');
  expect((await create('mine'))?.place.slot).toBe(2);
  expect([...places.values()].map((p) => `${p.slot}:${p.itemId}`).sort()).toEqual([
    '0:other',
    '1:legacy',
    '2:mine',
  ]);
});
