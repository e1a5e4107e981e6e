import { ValidationFailedError } from '../errors';
import { parseListQuery } from './list-query';

const options = { limitDefault: 50, limitMax: 500 };

function errorsOf(fn: () => unknown): { field: string; message: string }[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ValidationFailedError) return error.errors ?? [];
    throw error;
  }
  throw new Error('expected a ValidationFailedError');
}

describe('parseListQuery', () => {
  it('applies the defaults', () => {
    expect(parseListQuery({}, options)).toEqual({
      sortOrder: 'desc',
      sortOrderGiven: false,
      limit: 50,
      before: {},
      after: {},
      filters: {},
      exists: {},
      operators: [],
      params: {},
    });
  });

  it('splits sort, cursors, filters, existsFilter and named parameters', () => {
    const query = parseListQuery(
      {
        sort: 'name',
        sortOrder: 'asc',
        limit: '500',
        'after[name]': 'b',
        'after[id]': 'x',
        'before[createdAt]': '2026-01-01T00:00:00Z',
        tag: 'red',
        'filter[name]': 'n',
        'existsFilter[email]': 'false',
        authField: 'ownerId',
      },
      { ...options, params: ['authField'], allowExists: true },
    );
    expect(query).toEqual({
      sort: 'name',
      sortOrder: 'asc',
      sortOrderGiven: true,
      limit: 500,
      after: { name: 'b', id: 'x' },
      before: { createdAt: '2026-01-01T00:00:00Z' },
      filters: { tag: 'red', name: 'n' },
      exists: { email: false },
      operators: [],
      params: { authField: 'ownerId' },
    });
  });

  it('reads operator parameters only where the route takes them; in/nin may repeat', () => {
    const withOperators = { ...options, operators: { repeatable: ['in', 'nin'] } };
    const query = parseListQuery(
      {
        'filter[total][gte]': '10',
        'status[in]': ['a,b', 'c'],
        'name[$ne]': 'x',
        'after[total]': '5',
      },
      withOperators,
    );
    expect(query.operators).toEqual([
      { path: 'total', op: 'gte', values: ['10'], param: 'filter[total][gte]' },
      { path: 'status', op: 'in', values: ['a,b', 'c'], param: 'status[in]' },
      { path: 'name', op: '$ne', values: ['x'], param: 'name[$ne]' },
    ]);
    expect(query.after).toEqual({ total: '5' });
    expect(errorsOf(() => parseListQuery({ 'total[gte]': ['1', '2'] }, withOperators))).toEqual([
      { field: 'total[gte]', message: 'must be given once' },
    ]);
    expect(errorsOf(() => parseListQuery({ 'filter[total][gte]': '1' }, options))).toEqual([
      { field: 'filter[total][gte]', message: 'is not a recognised parameter' },
    ]);
  });

  it.each(['0', '501', 'abc', '1.5', '-1', ''])('rejects limit=%p', (limit) => {
    expect(errorsOf(() => parseListQuery({ limit }, options))).toEqual([
      { field: 'limit', message: 'must be an integer from 1 to 500' },
    ]);
  });

  it('never turns bracket syntax into operators', () => {
    const errors = errorsOf(() =>
      parseListQuery({ 'name[$ne]': 'x', 'a[$gt]': '', 'after[x][y]': '1' }, options),
    );
    expect(errors.map((e) => e.field).sort()).toEqual(['a[$gt]', 'after[x][y]', 'name[$ne]']);
  });

  it('rejects repeated parameters instead of picking one', () => {
    expect(errorsOf(() => parseListQuery({ name: ['a', 'b'] }, options))).toEqual([
      { field: 'name', message: 'must be given once, as a plain value' },
    ]);
  });

  it('reports every problem at once', () => {
    const errors = errorsOf(() =>
      parseListQuery(
        { sortOrder: 'up', limit: '0', 'existsFilter[a]': 'yes' },
        { ...options, allowExists: true },
      ),
    );
    expect(errors.map((e) => e.field).sort()).toEqual(['existsFilter[a]', 'limit', 'sortOrder']);
  });

  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses %s in every key position instead of dropping it',
    (name) => {
      const raw: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      const keys = [
        name,
        `filter[${name}]`,
        `existsFilter[${name}]`,
        `before[${name}]`,
        `after[${name}]`,
        `a.${name}`,
        `filter[a.${name}]`,
      ];
      for (const key of keys) raw[key] = key.startsWith('existsFilter') ? 'false' : '1';
      raw.color = 'red';
      const errors = errorsOf(() => parseListQuery(raw, { ...options, allowExists: true }));
      expect(errors.map((e) => e.field)).toEqual(keys);
    },
  );

  it('returns records without a prototype', () => {
    const query = parseListQuery(
      { 'filter[a]': '1', 'after[b]': '2', 'before[c]': '3', 'existsFilter[d]': 'true', p: 'x' },
      { ...options, params: ['p'], allowExists: true },
    );
    for (const record of [query.filters, query.after, query.before, query.exists, query.params]) {
      expect(Object.getPrototypeOf(record)).toBeNull();
    }
    expect(query.filters.constructor).toBeUndefined();
    expect(query.after.__proto__).toBeUndefined();
  });

  it('refuses existsFilter where the route does not support it', () => {
    expect(errorsOf(() => parseListQuery({ 'existsFilter[a]': 'true' }, options))[0]?.field).toBe(
      'existsFilter[a]',
    );
  });
});
