import { loadConfig } from '../config';
import type { PlanEntry } from './plan-entry';
import { PlanLimitsCache } from './plan-limits-cache';
import type { Plan, PlanRepository } from './plan.repository';

const config = loadConfig({
  NODE_ENV: 'test',
  ADMIN_API_KEY: 'test-operator-key-0123456789abcdefghijklmnop',
  MAX_COLLECTIONS: '7',
  PLAN_CACHE_MS: '1000',
});
const user = { kind: 'user', id: 'ada' } as const;
const T0 = Date.parse('2026-06-01T00:00:00Z');

function plan(name: string, limits: Plan['limits']): Plan {
  return { name, limits, metadata: {}, version: 1, updatedAt: new Date(T0) };
}

describe('PlanLimitsCache', () => {
  let entries: PlanEntry[];
  let catalogue: Plan[];
  let holders: { entriesOf: jest.Mock; holdersOf: jest.Mock };
  let plans: { list: jest.Mock };
  let limits: PlanLimitsCache;

  beforeEach(() => {
    jest.useFakeTimers({ now: T0 });
    entries = [];
    catalogue = [plan('pro', { collections: 20 })];
    holders = {
      entriesOf: jest.fn(() => Promise.resolve(entries)),
      holdersOf: jest.fn(),
    };
    plans = { list: jest.fn(() => Promise.resolve(catalogue)) };
    limits = new PlanLimitsCache(holders, plans as unknown as PlanRepository, config);
  });
  afterEach(() => jest.useRealTimers());

  it("gives a tenant without an active entry the deployment's limits, without reading the catalogue", async () => {
    const active = await limits.of(user);
    expect(active.plan).toBeNull();
    expect(active.limits.collections).toBe(7);
    expect(active.limits.itemsPerCollection).toBeNull();
    expect(plans.list).not.toHaveBeenCalled();
  });

  it("gives the active plan's limits over the deployment's, and reads nothing more within PLAN_CACHE_MS", async () => {
    entries = [{ planName: 'pro', since: new Date(T0 - 1000), until: null }];
    for (let i = 0; i < 5; i++) {
      const active = await limits.of(user);
      expect(active.plan).toEqual({ name: 'pro', since: new Date(T0 - 1000), until: null });
      expect(active.limits).toMatchObject({ collections: 20, indexesPerCollection: 20 });
      jest.advanceTimersByTime(100);
    }
    expect(holders.entriesOf).toHaveBeenCalledTimes(1);
    expect(plans.list).toHaveBeenCalledTimes(1);
    // Past PLAN_CACHE_MS, the next call reads both again.
    jest.advanceTimersByTime(500);
    await limits.of(user);
    expect(holders.entriesOf).toHaveBeenCalledTimes(2);
    expect(plans.list).toHaveBeenCalledTimes(2);
  });

  it('applies an until that passes at once, from the entries it keeps', async () => {
    entries = [
      { planName: 'base', since: new Date(T0 - 10_000), until: null },
      { planName: 'pro', since: new Date(T0 - 1000), until: new Date(T0 + 300) },
    ];
    catalogue = [plan('base', { collections: 3 }), plan('pro', { collections: 20 })];
    expect((await limits.of(user)).limits.collections).toBe(20);
    jest.advanceTimersByTime(299);
    expect((await limits.of(user)).plan?.name).toBe('pro');
    jest.advanceTimersByTime(1);
    const after = await limits.of(user);
    expect(after.plan?.name).toBe('base');
    expect(after.limits.collections).toBe(3);
    expect(holders.entriesOf).toHaveBeenCalledTimes(1);
  });

  it('sees a change made through this instance at once, one made elsewhere within PLAN_CACHE_MS', async () => {
    expect((await limits.of(user)).plan).toBeNull();
    entries = [{ planName: 'pro', since: new Date(T0 - 1000), until: null }];
    // Written elsewhere: this instance still trusts what it read.
    expect((await limits.of(user)).plan).toBeNull();
    limits.entriesChanged(user);
    expect((await limits.of(user)).limits.collections).toBe(20);
    catalogue = [plan('pro', { collections: 30 })];
    limits.catalogueChanged();
    expect((await limits.of(user)).limits.collections).toBe(30);
    catalogue = [plan('pro', { collections: 40 })];
    expect((await limits.of(user)).limits.collections).toBe(30);
    jest.advanceTimersByTime(1000);
    expect((await limits.of(user)).limits.collections).toBe(40);
  });

  it("gives an entry naming a plan the catalogue lacks the deployment's limits", async () => {
    entries = [{ planName: 'gone', since: new Date(T0 - 1000), until: null }];
    const active = await limits.of(user);
    expect(active.plan?.name).toBe('gone');
    expect(active.limits.collections).toBe(7);
  });

  it('keeps tenants apart: a team and a user of the same id', async () => {
    holders.entriesOf.mockImplementation((tenant: { kind: string }) =>
      Promise.resolve(
        tenant.kind === 'team' ? [{ planName: 'pro', since: new Date(T0 - 1), until: null }] : [],
      ),
    );
    expect((await limits.of({ kind: 'team', id: 'ada' })).plan?.name).toBe('pro');
    expect((await limits.of(user)).plan).toBeNull();
  });
});
