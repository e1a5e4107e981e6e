import { parseListQuery } from '../common/http/list-query';
import {
  coerceQueryValue,
  listPlan,
  pathCondition,
  queryConditions,
  toMongoFilter,
  toMongoSort,
} from './data-query';

const parse = (query: Record<string, string>) =>
  parseListQuery(query, {
    limitDefault: 50,
    limitMax: 500,
    params: ['authField'],
    allowExists: true,
  });

describe('data query builder', () => {
  it('coerces query values to the string plus the number, boolean or null they spell', () => {
    expect(coerceQueryValue('5')).toEqual(['5', 5]);
    expect(coerceQueryValue('-1.5e3')).toEqual(['-1.5e3', -1500]);
    expect(coerceQueryValue('true')).toEqual(['true', true]);
    expect(coerceQueryValue('null')).toEqual(['null', null]);
    expect(coerceQueryValue('05')).toEqual(['05']);
    expect(coerceQueryValue('0x10')).toEqual(['0x10']);
    expect(coerceQueryValue('')).toEqual(['']);
  });

  it('combines the owner scope and the client conditions with $and', () => {
    const conditions = queryConditions(parse({ 'a.b': '5', 'existsFilter[c]': 'false' }));
    expect(toMongoFilter({ scope: { field: 'userId', value: 'acct' }, conditions })).toEqual({
      $and: [{ userId: 'acct' }, { 'a.b': { $in: ['5', 5] } }, { c: { $exists: false } }],
    });
    expect(toMongoFilter({ scope: null, conditions: [] })).toEqual({});
  });

  it('matches null only where the field holds null', () => {
    expect(
      toMongoFilter({ scope: null, conditions: queryConditions(parse({ a: 'null' })) }),
    ).toEqual({ a: { $in: ['null', null], $exists: true } });
  });

  it('builds keyset cursors in the direction of the sort', () => {
    const asc = listPlan(
      parse({ sort: 'n', sortOrder: 'asc', 'after[n]': '5', 'after[_id]': 'x' }),
    );
    expect(toMongoFilter({ scope: null, conditions: [] }, asc)).toEqual({
      $or: [{ n: { $gt: 5 } }, { n: 5, _id: { $gt: 'x' } }],
    });
    expect(toMongoSort(asc)).toEqual({ n: 1, _id: 1 });
    const desc = listPlan(
      parse({ sort: '_createdAt', 'after[_createdAt]': '2026-01-01T00:00:00Z' }),
    );
    expect(toMongoFilter({ scope: null, conditions: [] }, desc)).toEqual({
      _createdAt: { $lt: new Date('2026-01-01T00:00:00Z') },
    });
    expect(listPlan(parse({ sort: 's', 'after[s]': 'abc' })).after?.value).toBe('abc');
  });

  it('walks backwards from a before[] cursor alone: reversed scan, same bound', () => {
    const before = listPlan(parse({ 'before[_id]': 'm' }));
    expect(before.reversed).toBe(true);
    expect(toMongoFilter({ scope: null, conditions: [] }, before)).toEqual({ _id: { $gt: 'm' } });
    expect(toMongoSort(before)).toEqual({ _id: 1 });
  });

  it('takes after[] and before[] together as a range, scanned forwards', () => {
    const range = listPlan(parse({ sortOrder: 'asc', 'after[_id]': 'a', 'before[_id]': 'm' }));
    expect(range.reversed).toBe(false);
    expect(toMongoFilter({ scope: null, conditions: [] }, range)).toEqual({
      $and: [{ _id: { $gt: 'a' } }, { _id: { $lt: 'm' } }],
    });
  });

  it('refuses cursors on other fields, bad dates and bad paths', () => {
    expect(() => listPlan(parse({ sort: 'n', 'after[m]': '1' }))).toThrow();
    expect(() =>
      listPlan(parse({ sort: '_updatedAt', 'after[_updatedAt]': '2026-13-45' })),
    ).toThrow();
    expect(() => listPlan(parse({ sort: 'n', 'after[_id]': 'x' }))).toThrow();
    expect(() => listPlan(parse({ sort: '$natural' }))).toThrow();
    expect(() => queryConditions(parse({ 'a.$b': '1' }))).toThrow();
    expect(() => pathCondition('$where', '1')).toThrow();
  });

  it('looks up _id by its exact string', () => {
    expect(pathCondition('_id', '5')).toEqual({ kind: 'eq', path: '_id', anyOf: ['5'] });
    expect(pathCondition('code', '5')).toEqual({ kind: 'eq', path: 'code', anyOf: ['5', 5] });
  });
});
