import { ConsoleLogger, Logger } from '@nestjs/common';
import { DomainError } from '../../../common/errors';
import { DATA_ERRORS } from '../../data.errors';
import type {
  BackgroundTaskOptions,
  BackgroundTasks,
} from '../../../common/scheduling/background-tasks';
import type { AppConfig } from '../../../config';
import type { RegisteredCollection } from '../../collections/collection-registry.repository';
import type { ExpiringCollectionsRepository } from './expiring-collections.repository';
import { EXPIRY_BATCH, EXPIRY_ROUND_ITEMS, ExpirySweep } from './expiry-sweep';
import type { ExpiringCollection, ItemExpiry } from './item-expiry';

/** A collection of the sweep's walk, with `expired` items waiting. */
function collection(name: string, extra: Partial<RegisteredCollection> = {}): ExpiringCollection {
  return {
    tenant: { kind: 'user', id: 'ada' },
    branch: '',
    entry: {
      id: name,
      name,
      physical: `d_${name}`,
      createdAt: new Date(0),
      rules: { expiry: { field: '_createdAt', afterSeconds: 1, changedAt: new Date(0) } },
      ...extra,
    },
  };
}

/** A sweep over `collections`, whose ItemExpiry deletes from `expired` (name → count). */
function sweepOver(
  collections: ExpiringCollection[],
  expired: Map<string, number | Error>,
  stopAfterRounds = Infinity,
) {
  let options: BackgroundTaskOptions | undefined;
  let rounds = 0;
  const task = {
    runNow: () => options!.run().then(() => undefined),
    get isStopped() {
      return rounds >= stopAfterRounds;
    },
  };
  const tasks = {
    register: (o: BackgroundTaskOptions) => ((options = o), task),
  } as unknown as BackgroundTasks;
  // The registry's cursor, as an async iterable.
  const repository = {
    all: () =>
      (async function* () {
        for (const entry of collections) yield await Promise.resolve(entry);
      })(),
  } as unknown as ExpiringCollectionsRepository;
  const limits: number[] = [];
  const expiry = {
    expireMatching: (where: ExpiringCollection, _match: unknown, limit: number) => {
      rounds += 1;
      limits.push(limit);
      const left = expired.get(where.entry.name) ?? 0;
      if (left instanceof Error) return Promise.reject(left);
      const found = Math.min(left, limit);
      expired.set(where.entry.name, left - found);
      return Promise.resolve({ found, deleted: found });
    },
  } as unknown as ItemExpiry;
  const config = { lifecycle: { expirySweepMs: 1000 } } as AppConfig;
  return {
    sweep: new ExpirySweep(repository, expiry, config, tasks),
    limits,
    options: () => options,
  };
}

describe('ExpirySweep', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new ConsoleLogger()));

  it('registers a background task every EXPIRY_SWEEP_MS', () => {
    const { options } = sweepOver([], new Map());
    expect(options()).toMatchObject({ name: 'expiry-sweep', intervalMs: 1000 });
  });

  it('deletes at most EXPIRY_ROUND_ITEMS per sweep, in rounds of EXPIRY_BATCH; the next sweep goes on', async () => {
    const expired = new Map<string, number | Error>([
      ['a', EXPIRY_ROUND_ITEMS - 50],
      ['b', 300],
    ]);
    const { sweep, limits } = sweepOver([collection('a'), collection('b')], expired);
    await sweep.runNow();
    expect(limits.every((limit) => limit <= EXPIRY_BATCH)).toBe(true);
    expect(expired.get('a')).toBe(0);
    expect(expired.get('b')).toBe(250);
    await sweep.runNow();
    expect(expired.get('b')).toBe(0);
  });

  it('leaves a moving collection and a refused one to later sweeps, and fails on anything else', async () => {
    const expired = new Map<string, number | Error>([
      ['moving', 10],
      ['paused', new DomainError(DATA_ERRORS.COLLECTION_MOVING, 'paused')],
      ['c', 10],
    ]);
    const moving = collection('moving', {
      moving: { move: 'm', cluster: 'x', database: 'y', phase: 'copying' },
    });
    const { sweep } = sweepOver([moving, collection('paused'), collection('c')], expired);
    await sweep.runNow();
    expect(expired.get('moving')).toBe(10);
    expect(expired.get('c')).toBe(0);

    const failing = sweepOver(
      [collection('down'), collection('d')],
      new Map<string, number | Error>([
        ['down', new Error('connection refused')],
        ['d', 10],
      ]),
    );
    await expect(failing.sweep.runNow()).rejects.toThrow('connection refused');
  });

  it('stops between rounds once the app shuts down', async () => {
    const expired = new Map<string, number | Error>([['a', 5 * EXPIRY_BATCH]]);
    const { sweep } = sweepOver([collection('a')], expired, 2);
    await sweep.runNow();
    expect(expired.get('a')).toBe(3 * EXPIRY_BATCH);
  });
});
