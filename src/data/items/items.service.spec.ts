import { WORDS_FIELD } from '../query/data.constants';
import fc from 'fast-check';
import type { CustomerPrincipal } from '../../auth';
import { DomainError } from '../../common/errors';
import { parseListQuery } from '../../common/http/list-query';
import type { AppConfig } from '../../config';
import type { CollectionRegistryRepository } from '../collections/collection-registry.repository';
import { CollectionNamePipe } from '../collections/collection-name.pipe';
import type { CollectionDropsService } from '../collections/collection-drops.service';
import type { ItemEvents } from './item-events';
import { CollectionsService } from '../collections/collections.service';
import type { ItemMatch } from '../query/data-query';
import {
  toItemChangeRequest,
  toItemListQuery,
  toItemRemovalRequest,
  toNewItemRequest,
} from '../query/data-requests';
import type { ItemsRepository } from './items.repository';
import type { TenantStorage } from '../storage/tenant-storage';
import type { CreateDataItemDto, DeleteDataItemDto, UpdateDataItemDto } from './dto/data-item.dto';
import { ItemSchemas } from '../rules/schema/item-schemas';
import { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import type { ItemExpiry } from '../rules/expiry/item-expiry';
import { ItemLimits } from './limits/item-limits.service';
import type { ItemPlaceRepository } from './limits/item-place.repository';
import { ItemsService } from './items.service';
import { FallbackWriteQueue } from '../../common/mongo/fallback-database';
import { ItemWritesService } from './item-writes.service';
import type { MoveWriteMarkers, TenantPlacements } from '../../placement';
import type { TenantLimits } from '../../plans';
import { CollectionWriteGate } from '../collections/collection-write.gate';
import { dataBudget, fieldPathProblem } from '../query/json-guard';
import { isGuarded, isScalar } from '../../common/json';
import type { UniqueClaimRepository } from './unique/unique-claim.repository';
import { UniqueValuesService } from './unique/unique-values.service';

const config = {
  limits: {
    dataMaxDepth: 20,
    bodyBytes: 1024 * 1024,
    maxCollections: 100,
    maxIndexes: 20,
    schemaCacheSize: 10,
  },
} as AppConfig;

const root: CustomerPrincipal = {
  kind: 'root',
  credential: { kind: 'key', keyId: 'k', expiresAt: null },
  subject: 'subj',
  branch: '',
  boundBranch: null,
};
const sub: CustomerPrincipal = {
  kind: 'sub',
  credential: { kind: 'key', keyId: 'k', expiresAt: null },
  subject: 'subj',
  clientId: 'c',
  accountId: 'acct',
  profileId: 'p',
  branch: '',
  boundBranch: '',
};

const limits = { maxConditions: 20, maxInValues: 100 };
const query = (q: Record<string, string> = {}) =>
  toItemListQuery(
    parseListQuery(q, {
      limitDefault: 50,
      limitMax: 500,
      params: ['authField', 'fields'],
      allowExists: true,
      operators: { repeatable: ['in', 'nin'] },
    }),
    limits,
  );

/** Every repository call, with its arguments; `feed` stands in for the change feed's methods. */
function setup(feed: Partial<Record<keyof ItemEvents, unknown>> = {}) {
  const calls: { method: string; args: unknown[] }[] = [];
  const stored = { _id: 'i1', _createdAt: new Date(), _updatedAt: new Date() };
  const record =
    (method: string, result: unknown) =>
    (...args: unknown[]) => {
      calls.push({ method, args });
      return Promise.resolve(typeof result === 'function' ? (result as () => unknown)() : result);
    };
  const entry = { name: 'c', physical: 'd_1', createdAt: new Date(), rules: {} };
  const registry = {
    cached: record('registry.cached', entry),
    find: record('registry.find', entry),
    countFor: record('registry.countFor', 0),
    listFor: record('registry.listFor', [entry]),
    register: record('registry.register', entry),
  } as unknown as CollectionRegistryRepository;
  const items = {
    insert: record('insert', { ok: true, item: stored }),
    findIdByValue: record('findIdByValue', null),
    existsById: record('existsById', false),
    findMatching: record('findMatching', [stored]),
    findMatchingIds: record('findMatchingIds', ['i1']),
    list: record('list', [stored]),
    count: record('count', 3),
    estimatedCount: record('estimatedCount', 7),
    updateById: record('updateById', stored),
    updateByIdWithPrior: record('updateByIdWithPrior', { before: stored, after: stored }),
    deleteById: record('deleteById', true),
    listIndexes: record('listIndexes', []),
    createIndex: record('createIndex', 'created'),
    dropIndex: record('dropIndex', undefined),
  } as unknown as ItemsRepository;
  // uniqueField claims always find the value free here; they are tested on a real database.
  const claims = {
    insert: (claim: unknown) => Promise.resolve(claim),
    release: () => Promise.resolve(),
    findForItems: () => Promise.resolve([]),
  } as unknown as UniqueClaimRepository;
  const unrecorded = () =>
    Promise.resolve({
      commit: () => Promise.resolve(),
      abandon: () => Promise.resolve(),
      failed: () => Promise.resolve(),
    });
  const passThroughEvents = {
    beginCreate: unrecorded,
    beginUpdate: unrecorded,
    beginDelete: unrecorded,
    ...feed,
  } as unknown as ItemEvents;
  // Drops are tested on a real database (data-collections e2e).
  const collections = new CollectionsService(
    registry,
    // The stub answers the storage's index listing as well.
    items as unknown as TenantStorage,
    {} as CollectionDropsService,
    {
      collectionCreated: (_p: unknown, _n: unknown, write: () => unknown) => write(),
    } as unknown as ItemEvents,
    // Tenants of this test were never placed: their collections live in the main database.
    {
      locate: () => Promise.resolve({ cluster: null, database: 'main' }),
    } as unknown as TenantPlacements,
    // No collection here is being moved: the gate writes no marker (moves are tested on real
    // databases, tenant-move e2e).
    new CollectionWriteGate(registry, {} as MoveWriteMarkers),
    // No plan: the deployment's collection limit.
    {
      of: () =>
        Promise.resolve({ plan: null, limits: { collections: config.limits.maxCollections } }),
    } as unknown as TenantLimits,
  );
  const uniqueValues = new UniqueValuesService(claims, items);
  // The feed is off, and no collection has a schema or an expiry rule (all three are tested on
  // a real database).
  const [events, schema] = [passThroughEvents, new SchemaEnforcement(new ItemSchemas(config))];
  const noExpiry = { releaseHeld: () => Promise.resolve() } as unknown as ItemExpiry;
  // No tenant here has an item limit (limits are tested on a real database, item-limits e2e).
  const noItemLimits = new ItemLimits(
    { of: () => Promise.resolve({ plan: null, limits: { itemsPerCollection: null } }) } as never,
    {} as ItemPlaceRepository,
    items,
  );
  const service = new ItemsService(
    collections,
    items,
    uniqueValues,
    events,
    schema,
    noExpiry,
    noItemLimits,
    config,
  );
  const writes = new ItemWritesService(
    new FallbackWriteQueue(),
    collections,
    items,
    uniqueValues,
    passThroughEvents,
    schema,
    noItemLimits,
    config,
  );
  const budget = dataBudget(config.limits);
  // The controller's path: the body becomes a guarded request, then the service applies the rules.
  const api = {
    create: (p: CustomerPrincipal, c: string, body: CreateDataItemDto) =>
      service.create(p, c, toNewItemRequest(body, budget)),
    update: (p: CustomerPrincipal, c: string, n: string, v: string, body: UpdateDataItemDto) =>
      writes.update(p, c, n, v, toItemChangeRequest(body, budget, limits)),
    remove: (p: CustomerPrincipal, c: string, n: string, v: string, body: DeleteDataItemDto) =>
      writes.remove(p, c, n, v, toItemRemovalRequest(body, limits)),
  };
  return { service, api, calls };
}

/** Resolves to the request's outcome, so that a synchronous throw counts as a rejection. */
const attempt = (run: () => Promise<unknown>): Promise<unknown> => Promise.resolve().then(run);

/** What may reach the item repository: guarded documents and server-built matches. */
function assertOnlyGuardedInput(calls: { method: string; args: unknown[] }[]): void {
  for (const { method, args } of calls) {
    if (method.startsWith('registry.')) continue;
    // The first argument is the collection (its registry entry), the rest the request's input.
    for (const arg of args.slice(1)) {
      if (typeof arg !== 'object' || arg === null || arg instanceof Date) continue;
      // The item's times (KeptTimes): dates, which no client JSON holds.
      const values = Object.values(arg);
      if (values.length > 0 && values.every((value) => value instanceof Date)) continue;
      // The hidden members (HiddenMembers): the word list the server makes from the guarded item.
      if (Object.keys(arg).every((member) => member === WORDS_FIELD)) continue;
      if ('conditions' in arg) {
        const match = arg as ItemMatch;
        for (const condition of match.conditions) {
          expect(fieldPathProblem(condition.path)).toBeNull();
          if (condition.kind === 'eq') expect(condition.anyOf.every(isScalar)).toBe(true);
          else if (condition.kind === 'exists') expect(typeof condition.exists).toBe('boolean');
          else throw new Error(`unexpected condition ${condition.kind}`);
        }
        for (const path of Object.keys(match.scope?.filter ?? {}))
          expect(fieldPathProblem(path)).toBeNull();
      } else if (['insert', 'updateById', 'updateByIdWithPrior'].includes(method)) {
        expect(isGuarded(arg)).toBe(true);
      }
    }
  }
}

describe('ItemsService behind the request mappers', () => {
  it('passes only guard-produced items and values to the repository', async () => {
    const { service, api, calls } = setup();
    const item = { a: { b: [1, 'x'] } };
    await attempt(() => api.create(sub, 'c', { item, uniqueField: 'a', authField: 'owner' })).catch(
      () => undefined,
    );
    await api.create(root, 'c', { item });
    await api.update(sub, 'c', 'code', '5', { values: { x: 1 }, filter: { y: 'z' } });
    await api.remove(root, 'c', '_id', 'i1', { filter: { y: null } });
    await service.list(sub, 'c', query({ a: '1', 'existsFilter[b]': 'true' }));
    await service.get(sub, 'c', 'n.m', 'true', query({ authField: 'owner' }));
    const insert = calls.find((c) => c.method === 'insert');
    expect(insert?.args[2]).not.toBe(item);
    assertOnlyGuardedInput(calls);
  });

  it('never calls the repository with hostile input', async () => {
    // Hostile to filters and documents alike; dotted keys are paths in filters, so they are
    // hostile to documents only.
    const hostile = fc.oneof(
      fc.constant({ $where: '1' }),
      fc.constant({ a: { $ne: null } }),
      fc.constant(JSON.parse('{"__proto__":{"x":1}}') as unknown),
      fc.string({ maxLength: 5 }).map((s) => ({ [`$${s}`]: 1 })),
      fc.string({ maxLength: 5 }).map((s) => ({ [`a.$${s}`]: 1 })),
    );
    await fc.assert(
      fc.asyncProperty(hostile, fc.constantFrom(root, sub), async (value, principal) => {
        const { api, calls } = setup();
        const dotted = { 'a.b': 1 };
        const attempts = [
          () => api.create(principal, 'c', { item: { ok: 1, nested: value } }),
          () => api.create(principal, 'c', { item: dotted }),
          () => api.update(principal, 'c', '_id', 'x', { values: { nested: value } }),
          () => api.update(principal, 'c', '_id', 'x', { values: dotted }),
          () => api.update(principal, 'c', '_id', 'x', { values: { a: 1 }, filter: value }),
          () => api.remove(principal, 'c', '_id', 'x', { filter: value }),
        ];
        for (const run of attempts) await expect(attempt(run)).rejects.toBeInstanceOf(DomainError);
        expect(calls).toEqual([]);
      }),
    );
  });

  it('stamps the owner value of a sub caller over the body, and only fills it in for root', async () => {
    const { api, calls } = setup();
    await api.create(sub, 'c', { item: { userId: 'other' } });
    await api.create(root, 'c', { item: { userId: 'other' } });
    await api.create(root, 'c', { item: {} });
    const inserted = calls.filter((c) => c.method === 'insert').map((c) => c.args[2]);
    expect(inserted).toEqual([{ userId: 'acct' }, { userId: 'other' }, { userId: 'subj' }]);
  });

  it('confines every sub read, update and delete to its owner value', async () => {
    const { service, api, calls } = setup();
    await service.list(sub, 'c', query({ authField: 'owner' }));
    await service.count(sub, 'c', query());
    await service.get(sub, 'c', '_id', 'x', query());
    await api.update(sub, 'c', '_id', 'x', { values: { a: 1 } });
    await api.remove(sub, 'c', '_id', 'x', {});
    const scopes = calls
      .filter((c) => !c.method.startsWith('registry.'))
      .map(
        (c) =>
          (c.args.find((a) => typeof a === 'object' && a && 'scope' in a) as ItemMatch).scope
            ?.filter,
      );
    expect(scopes[0]).toEqual({ owner: 'acct' });
    for (const scope of scopes.slice(1)) expect(scope).toEqual({ userId: 'acct' });
  });

  it("begins the feed change before the insert and commits the item's JSON it answers", async () => {
    const seen: { insertsAtBegin?: number; committed?: unknown[] } = {};
    const { api, calls } = setup({
      beginCreate: () => {
        seen.insertsAtBegin = calls.filter((c) => c.method === 'insert').length;
        return Promise.resolve({
          commit: (json: unknown[]) => {
            seen.committed = json;
            return Promise.resolve();
          },
          abandon: () => Promise.resolve(),
          failed: () => Promise.resolve(),
        });
      },
    });
    const { json } = await api.create(root, 'c', { item: { a: 1 } });
    expect(seen.insertsAtBegin).toBe(0);
    expect(calls.filter((c) => c.method === 'insert')).toHaveLength(1);
    expect(seen.committed).toHaveLength(1);
    // One JSON of the item: the event's data is the answer's body.
    expect(seen.committed?.[0]).toBe(json);
  });

  it("commits an update's JSON as the answer carries it: made once for the event and the answer", async () => {
    const seen: { committed?: { after: unknown[] } } = {};
    const { api } = setup({
      beginUpdate: () =>
        Promise.resolve({
          commit: (updated: { after: unknown[] }) => {
            seen.committed = updated;
            return Promise.resolve();
          },
          abandon: () => Promise.resolve(),
          failed: () => Promise.resolve(),
        }),
    });
    const { json } = await api.update(root, 'c', '_id', 'i1', { values: { a: 2 } });
    expect(seen.committed?.after).toHaveLength(1);
    expect(seen.committed?.after[0]).toBe(json);
  });

  it('reads the registry entry of a write once, from the cache the move gate decides on', async () => {
    const { api, calls } = setup();
    const lookups = () =>
      calls.filter((c) => c.method.startsWith('registry.')).map((c) => c.method);
    await api.create(root, 'c', { item: { a: 1 } });
    expect(lookups()).toEqual(['registry.cached']);
    await api.update(root, 'c', '_id', 'i1', { values: { a: 2 } });
    await api.remove(root, 'c', '_id', 'i1', {});
    expect(lookups()).toEqual(['registry.cached', 'registry.cached', 'registry.cached']);
  });

  it('counts from metadata only when the count is unconfined and unfiltered', async () => {
    const { service, calls } = setup();
    expect(await service.count(root, 'c', query())).toBe(7);
    expect(await service.count(root, 'c', query({ a: '1' }))).toBe(3);
    expect(await service.count(sub, 'c', query())).toBe(3);
    expect(calls.filter((c) => !c.method.startsWith('registry.')).map((c) => c.method)).toEqual([
      'estimatedCount',
      'count',
      'count',
    ]);
  });

  it('refuses a sub caller changing its owner field', async () => {
    const { api, calls } = setup();
    await expect(
      api.update(sub, 'c', '_id', 'x', { values: { userId: 'acct' } }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(calls).toEqual([]);
  });
});

describe('CollectionNamePipe', () => {
  it.each(['system.profile', '../x', 'a$b', 'a'.repeat(65), ''])(
    'refuses %j before any service sees it',
    (name) => {
      expect(() => new CollectionNamePipe().transform(name)).toThrow(
        expect.objectContaining({ code: 'INVALID_COLLECTION_NAME' }) as Error,
      );
    },
  );

  it('passes a valid name through', () => {
    expect(new CollectionNamePipe().transform('orders_2026-a')).toBe('orders_2026-a');
  });
});
