import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config';
import { BackgroundTasks } from '../common/scheduling/background-tasks';
import { DUPLICATE, type Duplicate } from '../common/mongo/duplicate';
import type { Tenant } from '../common/tenancy/namespace';
import { rowKeyOf } from './usage-counters';
import { utcDay } from './usage-day';
import type { GaugeValues, UsageGaugeSource } from './usage-gauges';
import { gaugeIdOf, type UsageGaugesRepository } from './usage-gauges.repository';
import type { SnapshotRun, UsageSnapshotRepository } from './usage-snapshot.repository';
import { snapshotDueDay, UsageSnapshots } from './usage-snapshots';

const config = {
  usage: { enabled: true, snapshotHour: 0, snapshotPollMs: 60_000, snapshotLeaseMs: 60_000 },
} as AppConfig;

/** usage_gauges as the database keeps it: one value per fixed id, the first insert wins. */
class FakeGauges {
  readonly stored = new Map<string, number>();

  insert(day: string, tenant: Tenant, values: GaugeValues): Promise<void> {
    for (const [gauge, value] of Object.entries(values)) {
      const id = gaugeIdOf(day, tenant, gauge);
      if (!this.stored.has(id)) this.stored.set(id, value);
    }
    return Promise.resolve();
  }

  measuredOn(day: string): Promise<Set<string>> {
    const rows = [...this.stored.keys()]
      .filter((id) => id.startsWith(`${day}/`) && id.endsWith('/fileBytesStored'))
      .map((id) => id.slice(0, -'/fileBytesStored'.length));
    return Promise.resolve(new Set(rows));
  }
}

/** usage_snapshots: a day's record inserted once, its lease renewed and taken over. */
class FakeSnapshots {
  readonly runs = new Map<string, SnapshotRun>();

  begin(day: string, _now: Date, leaseUntil: Date): Promise<SnapshotRun | Duplicate> {
    if (this.runs.has(day)) return Promise.resolve(DUPLICATE);
    const run: SnapshotRun = { day, status: 'running', leaseUntil, runs: 1 };
    this.runs.set(day, run);
    return Promise.resolve({ ...run });
  }

  find(day: string): Promise<SnapshotRun | null> {
    const run = this.runs.get(day);
    return Promise.resolve(run ? { ...run } : null);
  }

  takeOver(run: SnapshotRun, leaseUntil: Date): Promise<SnapshotRun | null> {
    const stored = this.runs.get(run.day);
    if (!stored || stored.leaseUntil.getTime() !== run.leaseUntil.getTime())
      return Promise.resolve(null);
    Object.assign(stored, { leaseUntil, runs: stored.runs + 1 });
    return Promise.resolve({ ...stored });
  }

  renew(day: string, leaseUntil: Date): Promise<void> {
    Object.assign(this.runs.get(day) ?? {}, { leaseUntil });
    return Promise.resolve();
  }

  markDone(day: string): Promise<void> {
    Object.assign(this.runs.get(day) ?? {}, { status: 'done' });
    return Promise.resolve();
  }
}

const ada: Tenant = { kind: 'user', id: 'ada' };
const bob: Tenant = { kind: 'user', id: 'bob' };
const crew: Tenant = { kind: 'team', id: 'crew' };

/** Tenants that store `items` items and ten times as many file bytes each; `absent` are not present. */
class FakeSource implements UsageGaugeSource {
  readonly measured: string[] = [];
  absent = new Set<string>();
  /** Tenants whose measure fails. */
  failing = new Set<string>();
  /** Called after a tenant is measured (an erasure starting meanwhile). */
  afterMeasure: (tenant: Tenant) => void = () => undefined;

  constructor(private readonly items: Map<string, number>) {}

  async *tenants(): AsyncIterable<Tenant> {
    for (const key of this.items.keys()) {
      const [kind, id] = key.split(':') as ['user' | 'team', string];
      yield await Promise.resolve({ kind, id });
    }
  }

  measure(tenant: Tenant): Promise<GaugeValues> {
    this.measured.push(tenant.id);
    if (this.failing.has(tenant.id)) return Promise.reject(new Error('cluster unreachable'));
    const items = this.items.get(`${tenant.kind}:${tenant.id}`) ?? 0;
    this.afterMeasure(tenant);
    return Promise.resolve({ itemsStored: items, fileBytesStored: items * 10 });
  }

  present(tenant: Tenant): Promise<boolean> {
    return Promise.resolve(!this.absent.has(tenant.id));
  }
}

function instance(gauges: FakeGauges, snapshots: FakeSnapshots, source: FakeSource) {
  return new UsageSnapshots(
    gauges as unknown as UsageGaugesRepository,
    snapshots as unknown as UsageSnapshotRepository,
    source,
    config,
    new BackgroundTasks(),
  );
}

const today = () => utcDay(Date.now());
const stored = () =>
  new Map([
    ['user:ada', 3],
    ['user:bob', 0],
    ['team:crew', 7],
  ]);

describe('snapshotDueDay', () => {
  const at = (iso: string) => Date.parse(iso);

  it('is the day from the snapshot hour on, and nothing before it', () => {
    expect(snapshotDueDay(at('2026-03-01T05:59:59.999Z'), 6)).toBeNull();
    expect(snapshotDueDay(at('2026-03-01T06:00:00.000Z'), 6)).toBe('2026-03-01');
    expect(snapshotDueDay(at('2026-03-01T23:59:59.999Z'), 23)).toBe('2026-03-01');
    expect(snapshotDueDay(at('2026-03-01T00:00:00.000Z'), 0)).toBe('2026-03-01');
  });
});

describe('UsageSnapshots', () => {
  // A resumed snapshot is logged: not this test's output.
  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());

  it('measures every present tenant once and writes each gauge under its fixed id', async () => {
    const [gauges, snapshots, source] = [
      new FakeGauges(),
      new FakeSnapshots(),
      new FakeSource(stored()),
    ];
    await instance(gauges, snapshots, source).takeNow();
    const day = today();
    expect(Object.fromEntries(gauges.stored)).toEqual({
      [gaugeIdOf(day, ada, 'itemsStored')]: 3,
      [gaugeIdOf(day, ada, 'fileBytesStored')]: 30,
      [gaugeIdOf(day, bob, 'itemsStored')]: 0,
      [gaugeIdOf(day, bob, 'fileBytesStored')]: 0,
      [gaugeIdOf(day, crew, 'itemsStored')]: 7,
      [gaugeIdOf(day, crew, 'fileBytesStored')]: 70,
    });
    expect(snapshots.runs.get(day)?.status).toBe('done');
  });

  it('leaves a day done, or held by a live lease, to the instance that has it', async () => {
    const [gauges, snapshots] = [new FakeGauges(), new FakeSnapshots()];
    const first = new FakeSource(stored());
    await instance(gauges, snapshots, first).takeNow();
    const second = new FakeSource(stored());
    await instance(gauges, snapshots, second).takeNow();
    expect(second.measured).toEqual([]);

    const held = new FakeSnapshots();
    await held.begin(today(), new Date(), new Date(Date.now() + 60_000));
    const third = new FakeSource(stored());
    await instance(new FakeGauges(), held, third).takeNow();
    expect(third.measured).toEqual([]);
  });

  it('takes over a snapshot whose lease ran out and measures only the tenants not measured yet', async () => {
    const [gauges, snapshots, source] = [
      new FakeGauges(),
      new FakeSnapshots(),
      new FakeSource(stored()),
    ];
    const day = today();
    // The holder measured ada, then died.
    await snapshots.begin(day, new Date(), new Date(Date.now() - 1));
    await gauges.insert(day, ada, { itemsStored: 2, fileBytesStored: 20 });
    await instance(gauges, snapshots, source).takeNow();
    expect(source.measured).toEqual(['bob', 'crew']);
    expect(gauges.stored.get(gaugeIdOf(day, ada, 'itemsStored'))).toBe(2);
    expect(snapshots.runs.get(day)).toMatchObject({ status: 'done', runs: 2 });
  });

  it('measures no tenant being erased or gone, nor one whose erasure starts while it is measured', async () => {
    const [gauges, snapshots, source] = [
      new FakeGauges(),
      new FakeSnapshots(),
      new FakeSource(stored()),
    ];
    source.absent.add('bob');
    source.afterMeasure = (tenant) => {
      if (tenant.id === 'crew') source.absent.add('crew');
    };
    await instance(gauges, snapshots, source).takeNow();
    expect(source.measured).toEqual(['ada', 'crew']);
    expect(await gauges.measuredOn(today())).toEqual(new Set([rowKeyOf(today(), ada)]));
  });

  it('measures the other tenants when one cannot be measured, and finishes the day', async () => {
    const [gauges, snapshots, source] = [
      new FakeGauges(),
      new FakeSnapshots(),
      new FakeSource(stored()),
    ];
    source.failing.add('bob');
    await instance(gauges, snapshots, source).takeNow();
    const day = today();
    expect(await gauges.measuredOn(day)).toEqual(
      new Set([rowKeyOf(day, ada), rowKeyOf(day, crew)]),
    );
    expect(snapshots.runs.get(day)?.status).toBe('done');
  });
});
