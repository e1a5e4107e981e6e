import { ValidationFailedError } from '../common/errors';
import { parseListQuery, type ListQuery } from '../common/http/list-query';
import { pageLink, toProjectListSpec } from './project.list-query';

function query(raw: Record<string, string | string[]>): ListQuery {
  return parseListQuery(raw, { limitDefault: 50, limitMax: 500 });
}

function errorsOf(fn: () => unknown): { field: string; message: string }[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationFailedError);
    return (error as ValidationFailedError).errors ?? [];
  }
  throw new Error('expected a ValidationFailedError');
}

describe('toProjectListSpec', () => {
  it('defaults to createdAt, descending, the default limit and no cursor', () => {
    expect(toProjectListSpec(query({}))).toEqual({
      sort: 'createdAt',
      sortOrder: 'desc',
      limit: 50,
      filters: {},
    });
  });

  it('reads sort, order, limit, filters in both forms and a (value, id) cursor', () => {
    const spec = toProjectListSpec(
      query({
        sort: 'name',
        sortOrder: 'asc',
        limit: '10',
        'after[name]': 'beta',
        'after[id]': '665F1C2A9B1E8A0012345678',
        tag: 'web',
        'filter[name]': 'beta',
      }),
    );
    expect(spec).toEqual({
      sort: 'name',
      sortOrder: 'asc',
      limit: 10,
      after: { value: 'beta', id: '665f1c2a9b1e8a0012345678' },
      filters: { tag: 'web', name: 'beta' },
    });
  });

  it('parses timestamp cursors as dates', () => {
    const spec = toProjectListSpec(
      query({ sort: 'updatedAt', 'before[updatedAt]': '2026-01-02T03:04:05+01:00' }),
    );
    expect(spec.before).toEqual({ value: new Date('2026-01-02T02:04:05.000Z') });
  });

  it('turns a sub-millisecond cursor into an exact millisecond bound and drops its id', () => {
    const id = '665f1c2a9b1e8a0012345678';
    // desc + after = smaller values: "< .0004" is "< .001" on millisecond dates.
    const desc = toProjectListSpec(
      query({ 'after[createdAt]': '2026-01-01T00:00:00.0004Z', 'after[id]': id }),
    );
    expect(desc.after).toEqual({ value: new Date('2026-01-01T00:00:00.001Z') });
    // asc + after = greater values: "> .0004" is "> .000".
    const asc = toProjectListSpec(
      query({ sortOrder: 'asc', 'after[createdAt]': '2026-01-01T00:00:00.0004Z', 'after[id]': id }),
    );
    expect(asc.after).toEqual({ value: new Date('2026-01-01T00:00:00.000Z') });
  });

  it('lists every problem at once', () => {
    const errors = errorsOf(() =>
      toProjectListSpec(
        query({
          sort: 'priority',
          'after[createdAt]': 'soon',
          'before[id]': 'xyz',
          colour: 'red',
        }),
      ),
    );
    expect(errors.map((e) => e.field).sort()).toEqual([
      'after[createdAt]',
      'before[id]',
      'colour',
      'sort',
    ]);
    expect(errors.find((e) => e.field === 'sort')?.message).toBe(
      'must be one of createdAt, updatedAt, name',
    );
  });

  it('refuses a cursor on another field than the sort field', () => {
    const errors = errorsOf(() => toProjectListSpec(query({ 'after[name]': 'x' })));
    expect(errors).toEqual([
      {
        field: 'after[name]',
        message: 'must name the sort field (sort=createdAt) or id; add sort=name to page by name',
      },
    ]);
  });

  it('refuses an id cursor without the sort value', () => {
    const errors = errorsOf(() =>
      toProjectListSpec(query({ 'after[id]': '665f1c2a9b1e8a0012345678' })),
    );
    expect(errors.map((e) => e.field)).toEqual(['after[id]']);
    expect(errors[0]?.message).toContain('after[createdAt]');
  });

  it('refuses unknown cursor fields and names the allowed ones', () => {
    const errors = errorsOf(() => toProjectListSpec(query({ 'before[userId]': 'x' })));
    expect(errors).toEqual([
      {
        field: 'before[userId]',
        message: 'is not a cursor field; allowed: createdAt, updatedAt, name, id',
      },
    ]);
  });

  it('refuses other filter keys and names the allowed ones', () => {
    const errors = errorsOf(() => toProjectListSpec(query({ 'filter[userId]': 'x' })));
    expect(errors.map((e) => e.field)).toEqual(['userId']);
    expect(errors[0]?.message).toContain('filters: name, tag (or filter[name], filter[tag])');
  });
});

describe('prototype-named parameters of GET /project', () => {
  it.each([
    'filter[__proto__]',
    '__proto__',
    'after[__proto__]',
    'before[constructor]',
    'filter[prototype]',
    'name.constructor',
  ])('refuses %s instead of listing every project', (key) => {
    const raw = Object.create(null) as Record<string, string>;
    raw[key] = 'x';
    expect(errorsOf(() => toProjectListSpec(query(raw))).map((e) => e.field)).toEqual([key]);
  });

  it('refuses prototype names that reach it in a hand-built query', () => {
    const filters = Object.create(null) as Record<string, string>;
    filters.__proto__ = 'x';
    const after = Object.create(null) as Record<string, string>;
    const name: string = 'constructor';
    after[name] = 'x';
    const spec: ListQuery = { ...query({}), filters, after };
    expect(
      errorsOf(() => toProjectListSpec(spec))
        .map((e) => e.field)
        .sort(),
    ).toEqual(['__proto__', 'after[constructor]']);
  });
});

describe('pageLink', () => {
  const edge = {
    id: '665f1c2a9b1e8a0012345678',
    name: 'a b&c',
    createdAt: '2026-01-02T03:04:05.678Z',
    updatedAt: '2026-01-03T00:00:00.000Z',
  };

  it('keeps the other parameters and replaces the after[] cursor', () => {
    const raw = {
      tag: 'web',
      'after[createdAt]': '2020-01-01T00:00:00Z',
      'after[id]': '000000000000000000000000',
      limit: '2',
    };
    const link = pageLink('/project', raw, toProjectListSpec(query(raw)), edge);
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    const url = new URL(match![1]!, 'http://localhost');
    expect(url.pathname).toBe('/project');
    expect([...url.searchParams]).toEqual([
      ['tag', 'web'],
      ['limit', '2'],
      ['after[createdAt]', edge.createdAt],
      ['after[id]', edge.id],
    ]);
  });

  it('uses the sort field of the request, encoded', () => {
    const raw = { sort: 'name' };
    const link = pageLink('/project', raw, toProjectListSpec(query(raw)), edge);
    expect(link).toBe(
      '</project?sort=name&after%5Bname%5D=a+b%26c&after%5Bid%5D=665f1c2a9b1e8a0012345678>; rel="next"',
    );
  });

  it('links backwards (rel="prev") from the first item when only before[] is given', () => {
    const raw = { 'before[createdAt]': '2030-01-01T00:00:00Z', sortOrder: 'asc' };
    const link = pageLink('/project', raw, toProjectListSpec(query(raw)), edge);
    const url = new URL(/^<([^>]+)>; rel="prev"$/.exec(link)![1]!, 'http://localhost');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      sortOrder: 'asc',
      'before[createdAt]': edge.createdAt,
      'before[id]': edge.id,
    });
  });

  it('keeps a before[] bound when walking forward through a window', () => {
    const raw = {
      'after[createdAt]': '2020-01-01T00:00:00Z',
      'before[createdAt]': '2030-01-01T00:00:00Z',
    };
    const link = pageLink('/project', raw, toProjectListSpec(query(raw)), edge);
    const url = new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!, 'http://localhost');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      'before[createdAt]': '2030-01-01T00:00:00Z',
      'after[createdAt]': edge.createdAt,
      'after[id]': edge.id,
    });
  });
});
