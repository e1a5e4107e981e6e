import { FixedWindowThrottlerStorage } from './fixed-window.storage';

describe('FixedWindowThrottlerStorage', () => {
  let storage: FixedWindowThrottlerStorage;

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    storage = new FixedWindowThrottlerStorage();
  });

  afterEach(() => {
    storage.onModuleDestroy();
    jest.useRealTimers();
  });

  it('counts hits per key and blocks past the limit until the window ends', async () => {
    for (let i = 1; i <= 3; i += 1) {
      expect(await storage.increment('a', 60_000, 3)).toMatchObject({
        totalHits: i,
        isBlocked: false,
      });
    }
    expect(await storage.increment('a', 60_000, 3)).toEqual({
      totalHits: 4,
      timeToExpire: 60,
      isBlocked: true,
      timeToBlockExpire: 60,
    });
    expect(await storage.increment('b', 60_000, 3)).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });

    jest.advanceTimersByTime(45_000);
    expect(await storage.increment('a', 60_000, 3)).toMatchObject({
      isBlocked: true,
      timeToBlockExpire: 15,
    });
    jest.advanceTimersByTime(15_000);
    expect(await storage.increment('a', 60_000, 3)).toMatchObject({
      totalHits: 1,
      isBlocked: false,
    });
  });

  it('evicts ended windows', async () => {
    await storage.increment('a', 1_000, 5);
    await storage.increment('b', 120_000, 5);
    jest.advanceTimersByTime(60_000);
    expect(storage.size).toBe(1);
  });
});
