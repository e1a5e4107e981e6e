import { BlockedAddresses, slotId, slotIdRange } from './auth-failure.budget';

describe('failed-authentication budget', () => {
  it('names slots so that the id range of one address and window holds only its own', () => {
    const range = slotIdRange('10.0.0.1', 60_000);
    const inRange = (id: string): boolean => id >= range.from && id < range.to;
    expect(slotId('10.0.0.1', 60_000, 0)).toBe('10.0.0.1|60000|0');
    expect(inRange(slotId('10.0.0.1', 60_000, 0))).toBe(true);
    expect(inRange(slotId('10.0.0.1', 60_000, 19))).toBe(true);
    expect(inRange(slotId('10.0.0.1', 600_000, 0))).toBe(false);
    expect(inRange(slotId('10.0.0.1', 6_000, 0))).toBe(false);
    expect(inRange(slotId('10.0.0.10', 60_000, 0))).toBe(false);
    expect(inRange(slotId('10.0.0.', 60_000, 0))).toBe(false);
    expect(inRange(slotId('::ffff:10.0.0.1', 60_000, 0))).toBe(false);
  });

  describe('BlockedAddresses', () => {
    it('blocks an address until its window ends', () => {
      const blocked = new BlockedAddresses(10);
      blocked.block('a', 5_000, 1_000);
      expect(blocked.blockedUntil('a', 4_999)).toBe(5_000);
      expect(blocked.blockedUntil('b', 4_999)).toBeNull();
      expect(blocked.blockedUntil('a', 5_000)).toBeNull();
      expect(blocked.size).toBe(0);
    });

    it('stays within its capacity, dropping ended entries first, then the oldest', () => {
      const blocked = new BlockedAddresses(3);
      blocked.block('ended', 2_000, 1_000);
      blocked.block('old', 9_000, 1_000);
      blocked.block('newer', 9_000, 1_000);
      blocked.block('new', 9_000, 3_000);
      expect(blocked.size).toBe(3);
      expect(blocked.blockedUntil('old', 3_000)).toBe(9_000);
      blocked.block('newest', 9_000, 3_000);
      expect(blocked.size).toBe(3);
      expect(blocked.blockedUntil('old', 3_000)).toBeNull();
      expect(blocked.blockedUntil('newer', 3_000)).toBe(9_000);
      expect(blocked.blockedUntil('newest', 3_000)).toBe(9_000);
    });
  });
});
