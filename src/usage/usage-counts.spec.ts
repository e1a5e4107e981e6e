import { UsageCountsDto } from './dto/usage.dto';
import { addCounts, emptyCounts } from './usage-counts';

describe('usage counts', () => {
  it('add member by member, absent members adding nothing', () => {
    const counts = addCounts(emptyCounts(), { read: 2, bytesOut: 10 });
    addCounts(counts, { read: 1, webhookEvents: 4 });
    expect(counts).toEqual({ ...emptyCounts(), read: 3, bytesOut: 10, webhookEvents: 4 });
  });

  it('add only the counters: other members and inherited ones add nothing', () => {
    const stored = Object.assign(Object.create({ write: 5 }) as object, { read: 1, day: 2 });
    expect(addCounts(emptyCounts(), stored)).toEqual({ ...emptyCounts(), read: 1 });
  });

  it('show stream time in minutes, to the millisecond', () => {
    expect(UsageCountsDto.from({ ...emptyCounts(), streamMs: 90_001 }).streamMinutes).toBe(1.5);
    expect(UsageCountsDto.from({ ...emptyCounts(), streamMs: 61 }).streamMinutes).toBe(0.001);
    expect(UsageCountsDto.from(emptyCounts())).not.toHaveProperty('streamMs');
  });
});
