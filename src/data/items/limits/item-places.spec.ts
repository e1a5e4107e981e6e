import { heldAbove, nextPlace, PLACE_GRACE_MS, surplusPlaces, type HeldPlace } from './item-places';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const old = new Date(NOW - PLACE_GRACE_MS);
const young = new Date(NOW - PLACE_GRACE_MS + 1);

function place(slot: number, itemId: string, claimedAt = old): HeldPlace {
  return { slot, itemId, claimedAt };
}

describe('nextPlace', () => {
  it('answers the lowest free slot while fewer than max are held', () => {
    expect(nextPlace([], 3)).toBe(0);
    expect(nextPlace([place(0, 'a'), place(2, 'c')], 3)).toBe(1);
    expect(nextPlace([place(1, 'b')], 3)).toBe(0);
  });

  it('answers max when max places are held, whatever their numbers', () => {
    expect(nextPlace([place(0, 'a'), place(1, 'b'), place(2, 'c')], 3)).toBe(3);
    // A limit lowered from 5 to 2: slot 0 is free, yet three items hold places.
    expect(nextPlace([place(1, 'b'), place(3, 'd'), place(4, 'e')], 2)).toBe(2);
  });

  it('answers a free slot below max once the places held fall below it', () => {
    // Lowered from 5 to 3, then deleted down to two items: slot 0 is given out.
    expect(nextPlace([place(3, 'd'), place(4, 'e')], 3)).toBe(0);
  });
});

describe('heldAbove', () => {
  it('tells whether a place at or above max is held', () => {
    expect(heldAbove([place(0, 'a'), place(1, 'b')], 2)).toBe(false);
    expect(heldAbove([place(0, 'a'), place(2, 'c')], 2)).toBe(true);
  });
});

describe('surplusPlaces', () => {
  it('takes back an old place whose item does not exist', () => {
    const held = [place(0, 'a'), place(1, 'gone')];
    expect(surplusPlaces(held, new Set(['a']), NOW)).toEqual([place(1, 'gone')]);
  });

  it('keeps a young place whose item does not exist yet (a create under way)', () => {
    const held = [place(0, 'a'), place(1, 'new', young)];
    expect(surplusPlaces(held, new Set(['a']), NOW)).toEqual([]);
  });

  it('takes back every old place of an item but its lowest', () => {
    const held = [place(4, 'a'), place(1, 'a'), place(2, 'b'), place(6, 'a', young)];
    expect(surplusPlaces(held, new Set(['a', 'b']), NOW)).toEqual([place(4, 'a')]);
  });

  it('keeps the places of stored items', () => {
    const held = [place(0, 'a'), place(1, 'b')];
    expect(surplusPlaces(held, new Set(['a', 'b']), NOW)).toEqual([]);
  });
});
