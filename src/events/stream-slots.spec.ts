import { TooManyStreamsError } from './events.errors';
import { StreamSlots, type PerKeyLimit } from './stream-slots';

function refusal(take: () => unknown): TooManyStreamsError {
  try {
    take();
  } catch (error) {
    if (error instanceof TooManyStreamsError) return error;
    throw error;
  }
  throw new Error('expected TooManyStreamsError');
}

const key = (max: number | null): PerKeyLimit => ({ max, holder: 'key' });

describe('StreamSlots', () => {
  it('refuses a key beyond its limit while other keys still get slots', () => {
    const slots = new StreamSlots({ total: 10 });
    slots.take('a', key(2));
    slots.take('a', key(2));
    const error = refusal(() => slots.take('a', key(2)));
    expect(error.code).toBe('TOO_MANY_STREAMS');
    expect(error.message).toContain('EVENTS_MAX_STREAMS_PER_KEY');
    expect(error.headers).toEqual({ 'Retry-After': '5' });
    slots.take('b', key(2));
    expect(slots.open).toBe(3);
  });

  it('holds each key to the limit it is given as it takes a slot', () => {
    const slots = new StreamSlots({ total: 10 });
    slots.take('a', key(3));
    slots.take('a', key(3));
    // The tenant's limit was lowered: the streams held stay, a new one is refused.
    expect(refusal(() => slots.take('a', key(1))).message).toContain('holds 1 event streams');
    expect(slots.open).toBe(2);
    // Raised: a new one is taken.
    slots.take('a', key(5));
    expect(slots.open).toBe(3);
  });

  it('takes any number for a key without a limit, within the instance total', () => {
    const slots = new StreamSlots({ total: 3 });
    for (let i = 0; i < 3; i += 1) slots.take('a', key(null));
    expect(refusal(() => slots.take('a', key(null))).message).toContain('EVENTS_MAX_STREAMS)');
  });

  it("names the publishable key's own setting when it refuses one", () => {
    const slots = new StreamSlots({ total: 10 });
    const publishable: PerKeyLimit = { max: 1, holder: 'publishable key' };
    slots.take('p', publishable);
    const error = refusal(() => slots.take('p', publishable));
    expect(error.message).toContain('EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY');
  });

  it('refuses every key once the instance is full', () => {
    const slots = new StreamSlots({ total: 3 });
    slots.take('a', key(5));
    slots.take('b', key(5));
    slots.take('c', key(5));
    expect(refusal(() => slots.take('d', key(5))).message).toContain('EVENTS_MAX_STREAMS)');
  });

  it('gives a slot back exactly once, however often it is released', () => {
    const slots = new StreamSlots({ total: 2 });
    const release = slots.take('a', key(2));
    slots.take('a', key(2));
    release();
    release();
    expect(slots.open).toBe(1);
    slots.take('a', key(2));
    expect(slots.open).toBe(2);
    refusal(() => slots.take('a', key(2)));
    refusal(() => slots.take('b', key(2)));
  });
});
