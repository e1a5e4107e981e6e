import { fixedWindow, secondsUntil } from './fixed-window';

describe('fixed windows', () => {
  it('puts every instant in the epoch-aligned window that contains it', () => {
    expect(fixedWindow(0, 60_000)).toEqual({ start: 0, end: 60_000 });
    expect(fixedWindow(59_999, 60_000)).toEqual({ start: 0, end: 60_000 });
    expect(fixedWindow(60_000, 60_000)).toEqual({ start: 60_000, end: 120_000 });
    expect(fixedWindow(1_700_000_123_456, 5_000)).toEqual({
      start: 1_700_000_120_000,
      end: 1_700_000_125_000,
    });
  });

  it('rounds Retry-After up to whole seconds and never below 1', () => {
    expect(secondsUntil(10_000, 0)).toBe(10);
    expect(secondsUntil(10_000, 8_999)).toBe(2);
    expect(secondsUntil(10_000, 9_999)).toBe(1);
    expect(secondsUntil(10_000, 10_000)).toBe(1);
  });
});
