import { TooManyStreamsError } from './events.errors';
import { StreamSlots } from './stream-slots';

function refusal(take: () => unknown): TooManyStreamsError {
  try {
    take();
  } catch (error) {
    if (error instanceof TooManyStreamsError) return error;
    throw error;
  }
  throw new Error('expected TooManyStreamsError');
}

describe('StreamSlots', () => {
  it('refuses a key beyond its limit while other keys still get slots', () => {
    const slots = new StreamSlots({ perKey: 2, total: 10 });
    slots.take('a');
    slots.take('a');
    const error = refusal(() => slots.take('a'));
    expect(error.code).toBe('TOO_MANY_STREAMS');
    expect(error.message).toContain('EVENTS_MAX_STREAMS_PER_KEY');
    expect(error.headers).toEqual({ 'Retry-After': '5' });
    slots.take('b');
    expect(slots.open).toBe(3);
  });

  it('holds a publishable key to its own number, and other keys to theirs', () => {
    const slots = new StreamSlots({ perKey: 3, perPublishableKey: 1, total: 10 });
    slots.take('p', true);
    const error = refusal(() => slots.take('p', true));
    expect(error.message).toContain('EVENTS_MAX_STREAMS_PER_PUBLISHABLE_KEY');
    slots.take('k');
    slots.take('k');
    slots.take('k');
    expect(refusal(() => slots.take('k')).message).toContain('EVENTS_MAX_STREAMS_PER_KEY');
    expect(slots.open).toBe(4);
  });

  it('refuses every key once the instance is full', () => {
    const slots = new StreamSlots({ perKey: 5, total: 3 });
    slots.take('a');
    slots.take('b');
    slots.take('c');
    expect(refusal(() => slots.take('d')).message).toContain('EVENTS_MAX_STREAMS)');
  });

  it('gives a slot back exactly once, however often it is released', () => {
    const slots = new StreamSlots({ perKey: 2, total: 2 });
    const release = slots.take('a');
    slots.take('a');
    release();
    release();
    expect(slots.open).toBe(1);
    slots.take('a');
    expect(slots.open).toBe(2);
    refusal(() => slots.take('a'));
    refusal(() => slots.take('b'));
  });
});
