import { compileLiveFilter } from './live-filter';

const limits = { maxConditions: 3, maxInValues: 2 };
const compile = (params: Record<string, string | string[]>) => compileLiveFilter(params, limits);

describe('compileLiveFilter', () => {
  it('reads equality as the list does: a value matches its string and what it spells', () => {
    const filter = compile({ 'filter[n]': '5' });
    expect(filter.matches({ _id: 'a', n: 5 })).toBe(true);
    expect(filter.matches({ _id: 'a', n: '5' })).toBe(true);
    expect(filter.matches({ _id: 'a', n: 6 })).toBe(false);
    expect(filter.matches({ _id: 'a' })).toBe(false);
  });

  it('compares ranges only with values of the same type, like the database', () => {
    const filter = compile({ 'filter[n][gt]': '5' });
    expect(filter.matches({ _id: 'a', n: 10 })).toBe(true);
    expect(filter.matches({ _id: 'a', n: '10' })).toBe(false);
    expect(compile({ 'filter[s][lt]': 'b' }).matches({ _id: 'a', s: 'a' })).toBe(true);
    expect(compile({ 'filter[s][lt]': 'b' }).matches({ _id: 'a', s: 1 })).toBe(false);
  });

  it('applies in, nin, ne, exists and prefix', () => {
    expect(compile({ 'filter[s][in]': 'a,b' }).matches({ _id: 'x', s: 'b' })).toBe(true);
    expect(compile({ 'filter[s][nin]': 'a,b' }).matches({ _id: 'x' })).toBe(true);
    expect(compile({ 'filter[s][ne]': 'a' }).matches({ _id: 'x', s: 'a' })).toBe(false);
    expect(compile({ 'filter[s][exists]': 'false' }).matches({ _id: 'x' })).toBe(true);
    expect(compile({ 'filter[s][prefix]': 'a.' }).matches({ _id: 'x', s: 'a.b' })).toBe(true);
    expect(compile({ 'filter[s][prefix]': 'a.' }).matches({ _id: 'x', s: 'ab' })).toBe(false);
    expect(compile({ 'filter[tags]': 'x' }).matches({ _id: 'x', tags: ['y', 'x'] })).toBe(true);
  });

  it('compares timestamps as dates, though events carry them as text', () => {
    const filter = compile({ 'filter[_updatedAt][gte]': '2026-01-02T00:00:00Z' });
    expect(filter.matches({ _id: 'a', _updatedAt: '2026-01-02T00:00:00.000Z' })).toBe(true);
    expect(filter.matches({ _id: 'a', _updatedAt: '2026-01-01T23:59:59.999Z' })).toBe(false);
  });

  it('projects the item with fields', () => {
    const item = { _id: 'a', s: 'x', n: 1, o: { p: 1, q: 2 }, l: [{ p: 1, q: 2 }, 3] };
    expect(compile({ fields: 'n,o.p,l.q' }).project(item)).toEqual({
      _id: 'a',
      n: 1,
      o: { p: 1 },
      l: [{ q: 2 }],
    });
    expect(compile({ fields: '-s,-o.q' }).project(item)).toEqual({
      _id: 'a',
      n: 1,
      o: { p: 1 },
      l: [{ p: 1, q: 2 }, 3],
    });
  });

  it('refuses what a list refuses, with the same limits', () => {
    expect(() => compile({ 'filter[s][regex]': 'a' })).toThrow();
    expect(() => compile({ 'filter[s][in]': 'a,b,c' })).toThrow();
    expect(() =>
      compile({ 'filter[a]': '1', 'filter[b]': '1', 'filter[c]': '1', 'filter[d]': '1' }),
    ).toThrow();
    expect(() => compile({ 'filter[$where]': '1' })).toThrow();
    expect(() => compile({ fields: 'a,-b' })).toThrow();
  });
});
