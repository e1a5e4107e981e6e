import { parseListQuery } from '../../common/http/list-query';
import { ValidationFailedError } from '../../common/errors';
import { pathCondition, toMongoFilter } from './data-query';
import { bodyFilterConditions } from './body-filters';
import {
  coerceQueryValue,
  queryConditions as conditionsOf,
  type Condition,
} from './filter-operators';
import { listPlan, toMongoSort } from './list-plan';
import { parseProjection, projectedETag, projects } from './projection';

const limits = { maxConditions: 20, maxInValues: 100 };
const queryConditions = (query: Parameters<typeof conditionsOf>[0]): Condition[] =>
  conditionsOf(query, limits);
const filterOf = (conditions: Condition[]) => toMongoFilter({ scope: null, conditions });

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationFailedError) return (error.errors ?? []).map((e) => e.field);
    throw error;
  }
  throw new Error('expected a ValidationFailedError');
}

const parse = (query: Record<string, string | string[]>) =>
  parseListQuery(query, {
    limitDefault: 50,
    limitMax: 500,
    params: ['authField'],
    allowExists: true,
    operators: { repeatable: ['in', 'nin'] },
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
    expect(toMongoFilter({ scope: { filter: { userId: 'acct' } }, conditions })).toEqual({
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
    expect(listPlan(parse({ sort: 's', 'after[s]': 'abc' })).after?.values).toEqual(['abc']);
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
    expect(() => listPlan(parse({ sort: 'a,-b', 'after[a]': '1', 'after[_id]': 'x' }))).toThrow();
    expect(() => listPlan(parse({ sort: '$natural' }))).toThrow();
    expect(() => queryConditions(parse({ 'a.$b': '1' }))).toThrow();
    expect(() => pathCondition('$where', '1')).toThrow();
  });

  it('looks up _id by its exact string', () => {
    expect(pathCondition('_id', '5')).toEqual({ kind: 'eq', path: '_id', anyOf: ['5'] });
    expect(pathCondition('code', '5')).toEqual({ kind: 'eq', path: 'code', anyOf: ['5', 5] });
  });

  it('reads every operator of a query string into typed conditions', () => {
    const conditions = queryConditions(
      parse({
        'filter[total][gte]': '10',
        'total[lt]': '20.5',
        'name[gt]': 'abc',
        'status[in]': 'open,paid',
        'kind[nin]': ['a,b', 'c'],
        'code[ne]': '7',
        'note[exists]': 'false',
        'sku[prefix]': 'A.*',
        'flag[eq]': 'true',
        '_createdAt[lt]': '2026-01-02T03:04:05.678Z',
      }),
    );
    expect(filterOf(conditions)).toEqual({
      $and: [
        { total: { $gte: 10 } },
        { total: { $lt: 20.5 } },
        { name: { $gt: 'abc' } },
        { status: { $in: ['open', 'paid'] } },
        { kind: { $nin: ['a,b', 'c'] } },
        { code: { $nin: ['7', 7] } },
        { note: { $exists: false } },
        { sku: { $regex: '^A\\.\\*' } },
        { flag: { $in: ['true', true] } },
        { _createdAt: { $lt: new Date('2026-01-02T03:04:05.678Z') } },
      ],
    });
  });

  it('moves a sub-millisecond timestamp bound to the millisecond that keeps its meaning', () => {
    const at = '2026-01-02T03:04:05.6789Z';
    const ms = new Date('2026-01-02T03:04:05.678Z');
    // Plain equality first, then the operators in their order.
    expect(
      queryConditions(parse({ '_updatedAt[gte]': at, '_updatedAt[lt]': at, _updatedAt: at })),
    ).toEqual([
      { kind: 'eq', path: '_updatedAt', anyOf: [] },
      { kind: 'range', path: '_updatedAt', op: 'gt', value: ms },
      { kind: 'range', path: '_updatedAt', op: 'lte', value: ms },
    ]);
  });

  it('refuses unknown operators, empty and oversized lists, too many conditions, naming each', () => {
    expect(
      fieldsOf(() =>
        queryConditions(
          parse({
            'a[$gt]': '1',
            'b[regex]': 'x',
            'c[in]': '',
            'd[nin]': Array.from({ length: 101 }, (_, i) => String(i)),
            'e[exists]': 'yes',
            'f[prefix]': '',
            '_createdAt[gt]': 'yesterday',
          }),
        ),
      ),
    ).toEqual([
      'a[$gt]',
      'b[regex]',
      'c[in]',
      'd[nin]',
      'e[exists]',
      'f[prefix]',
      '_createdAt[gt]',
    ]);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}[gt]`, '1']));
    expect(fieldsOf(() => queryConditions(parse(many)))).toEqual(['filter']);
  });

  it('reads body filters with JSON types kept and the same operator names', () => {
    const conditions = bodyFilterConditions(
      {
        total: { gte: 10, lt: '20' },
        status: 'open',
        tags: { in: ['a', 1, null] },
        x: { exists: true },
      },
      'filter',
      limits,
    );
    expect(filterOf(conditions)).toEqual({
      $and: [
        { total: { $gte: 10 } },
        { total: { $lt: '20' } },
        { status: 'open' },
        { tags: { $in: ['a', 1, null], $exists: true } },
        { x: { $exists: true } },
      ],
    });
    expect(bodyFilterConditions(null, 'filter', limits)).toEqual([]);
    const refused = [
      { a: { $gt: 1 } },
      { a: { gt: null } },
      { a: { gt: true } },
      { a: { in: [] } },
      { a: { in: [[1]] } },
      { a: {} },
      { a: [1] },
      { a: { eq: { b: 1 } } },
      { $where: '1' },
      { a: { exists: 'true' } },
    ];
    for (const filter of refused)
      expect(() => bodyFilterConditions(filter, 'filter', limits)).toThrow(ValidationFailedError);
  });

  it('sorts by several fields and bounds cursors lexicographically, then by _id', () => {
    const plan = listPlan(
      parse({ sort: 'a,-b', 'after[a]': '1', 'after[b]': 'x', 'after[_id]': 'i' }),
    );
    expect(toMongoSort(plan)).toEqual({ a: 1, b: -1, _id: -1 });
    expect(filterOf([])).toEqual({});
    expect(toMongoFilter({ scope: null, conditions: [] }, plan)).toEqual({
      $or: [{ a: { $gt: 1 } }, { a: 1, b: { $lt: 'x' } }, { a: 1, b: 'x', _id: { $lt: 'i' } }],
    });
    expect(toMongoSort(listPlan(parse({ sort: '-a' })))).toEqual({ a: -1, _id: -1 });
    expect(toMongoSort(listPlan(parse({ sort: 'a' })))).toEqual({ a: -1, _id: -1 });
    expect(fieldsOf(() => listPlan(parse({ sort: 'a,b', sortOrder: 'asc' })))).toEqual([
      'sortOrder',
    ]);
    expect(fieldsOf(() => listPlan(parse({ sort: 'a,a' })))).toEqual(['sort']);
    expect(fieldsOf(() => listPlan(parse({ sort: '_id,a' })))).toEqual(['sort']);
  });

  it('projects listed fields or all but them, refusing overlaps, mixtures and _id exclusion', () => {
    expect(parseProjection('a,b.c')).toEqual({ mode: 'include', paths: ['a', 'b.c'] });
    expect(parseProjection('-a')).toEqual({ mode: 'exclude', paths: ['a'] });
    for (const text of ['a,-b', 'a,a.b', '-_id', 'a.$b', ''])
      expect(() => parseProjection(text)).toThrow(ValidationFailedError);
    const included = parseProjection('a,b');
    expect(projects(included, 'b')).toBe(true);
    expect(projects(included, 'c')).toBe(false);
    expect(projects(parseProjection('-c'), 'c.d')).toBe(false);
    expect(projectedETag('"x.1"', null)).toBe('"x.1"');
    expect(projectedETag('"x.1"', included)).toMatch(/^"x\.1~[\w-]{10}"$/);
    expect(projectedETag('"x.1"', included)).not.toBe(projectedETag('"x.1"', parseProjection('a')));
  });
});
