import { emptyCounts } from './usage-counts';
import { rowKeyOf, UsageCounters } from './usage-counters';

const ada = { kind: 'user' as const, id: 'auth0|ada' };
const team = { kind: 'team' as const, id: '665f1c2a9b1e8a0012345678' };

describe('UsageCounters', () => {
  let now = Date.parse('2026-03-01T23:59:59.500Z');
  const counters = new UsageCounters(() => now);

  beforeEach(() => {
    now = Date.parse('2026-03-01T23:59:59.500Z');
    counters.drain();
  });

  it('adds the counts of one tenant and day into one row', () => {
    counters.add(ada, { read: 1, bytesIn: 100, bytesOut: 300 });
    counters.add(ada, { read: 1, bytesIn: 50, bytesOut: 10 });
    counters.add(ada, { write: 1 });
    expect(counters.drain()).toEqual([
      {
        day: '2026-03-01',
        tenant: ada,
        counts: { ...emptyCounts(), read: 2, write: 1, bytesIn: 150, bytesOut: 310 },
      },
    ]);
  });

  it('buckets by the UTC day of the instant a count is added', () => {
    counters.add(ada, { read: 1 });
    now = Date.parse('2026-03-02T00:00:00.000Z');
    counters.add(ada, { read: 3 });
    expect(counters.drain().map((row) => [row.day, row.counts.read])).toEqual([
      ['2026-03-01', 1],
      ['2026-03-02', 3],
    ]);
  });

  it('keeps tenants apart and drains in key order (day, then tenant)', () => {
    now = Date.parse('2026-03-02T10:00:00Z');
    counters.add(team, { webhookEvents: 2 });
    counters.add(ada, { stream: 1, streamMs: 61_000 });
    now = Date.parse('2026-03-01T10:00:00Z');
    counters.add(team, { export: 1 });
    expect(counters.drain().map((row) => rowKeyOf(row.day, row.tenant))).toEqual([
      '2026-03-01/team/665f1c2a9b1e8a0012345678',
      '2026-03-02/team/665f1c2a9b1e8a0012345678',
      '2026-03-02/user/auth0|ada',
    ]);
  });

  it('starts again from nothing after a drain', () => {
    counters.add(ada, { read: 1 });
    expect(counters.isEmpty).toBe(false);
    expect(counters.drain()).toHaveLength(1);
    expect(counters.isEmpty).toBe(true);
    expect(counters.drain()).toEqual([]);
    counters.add(ada, { read: 1 });
    expect(counters.drain()[0]?.counts.read).toBe(1);
  });

  it('does not share a row with a drained one', () => {
    counters.add(ada, { read: 1 });
    const [drained] = counters.drain();
    counters.add(ada, { read: 5 });
    expect(drained?.counts.read).toBe(1);
  });
});
