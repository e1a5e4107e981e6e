import type { Tenant } from '../common/tenancy/namespace';
import { emptyCounts } from './usage-counts';
import type { UsageRow } from './usage-counters';
import type { GaugeRow } from './usage-gauges.repository';
import { mergeRows } from './usage.service';

const ada: Tenant = { kind: 'user', id: 'ada' };
const crew: Tenant = { kind: 'team', id: 'crew' };
const at = new Date('2026-01-02T00:03:00Z');

const counted = (day: string, tenant = ada, read = 1): UsageRow => ({
  day,
  tenant,
  counts: { ...emptyCounts(), read },
});
const measured = (day: string, tenant = ada, itemsStored = 5): GaugeRow => ({
  day,
  tenant,
  gauges: { itemsStored, fileBytesStored: 50, measuredAt: at },
});

describe('mergeRows', () => {
  it('makes one row of a tenant counted and measured on a day, in row order', () => {
    const rows = mergeRows(
      [counted('2026-01-01'), counted('2026-01-02')],
      [measured('2026-01-02'), measured('2026-01-02', crew, 9)],
      10,
    );
    expect(rows).toEqual([
      counted('2026-01-01'),
      { ...counted('2026-01-02', crew, 0), gauges: measured('2026-01-02', crew, 9).gauges },
      { ...counted('2026-01-02'), gauges: measured('2026-01-02').gauges },
    ]);
  });

  it('keeps the first `limit` rows of the union', () => {
    const rows = mergeRows(
      [counted('2026-01-01'), counted('2026-01-03')],
      [measured('2026-01-02'), measured('2026-01-04')],
      3,
    );
    expect(rows.map((row) => row.day)).toEqual(['2026-01-01', '2026-01-02', '2026-01-03']);
  });
});
