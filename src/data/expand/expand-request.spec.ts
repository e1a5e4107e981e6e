import { ValidationFailedError } from '../../common/errors';
import { parseProjection } from '../query/projection';
import { EXPAND_SCHEMA_PATTERN } from '../query/json-guard';
import { expandedETag, parseExpandRequest } from './expand-request';
import { referenceIds, withReferences } from './references';

const parse = (expand: string | undefined, fields?: string) =>
  parseExpandRequest(expand, parseProjection(fields));

describe('parseExpandRequest', () => {
  it('reads path:collection pairs; without fields each expanded item is whole', () => {
    expect(parse('customer:customers,lines.product:products')).toEqual({
      expansions: [
        { path: 'customer', collection: 'customers', projection: null },
        { path: 'lines.product', collection: 'products', projection: null },
      ],
      projection: null,
    });
    expect(parse(undefined, 'a')).toEqual({ expansions: [], projection: parseProjection('a') });
  });

  it.each([
    'a:x,b:x,c:x,d:x,e:x',
    'a',
    'a:',
    ':x',
    'a:x:y',
    '_id:x',
    '_updatedAt.x:x',
    'a:1x',
    'a:x,a.b:y',
    'a.b:x,a:y',
    'a:x,a:y',
    '_revision:x',
    '$a:x',
  ])('refuses %s naming expand', (text) => {
    let thrown: unknown;
    try {
      parse(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationFailedError);
    expect((thrown as ValidationFailedError).errors?.map((e) => e.field)).toContain('expand');
  });

  it('the document pattern accepts what the parser accepts, of these', () => {
    const pattern = new RegExp(EXPAND_SCHEMA_PATTERN, 'u');
    for (const good of ['customer:customers', 'a.b:x,c:y_z-1', 'x._id:y', 'a:x,b:x,c:x,d:x'])
      expect(pattern.test(good)).toBe(true);
    for (const bad of ['a:x,b:x,c:x,d:x,e:x', '_id:x', '_createdAt.a:x', 'a', 'a:1x', '_words:x'])
      expect(pattern.test(bad)).toBe(false);
  });

  it('moves fields below an expanded path to the expansion and keeps the reference', () => {
    expect(parse('customer:c,lines.product:p', 'customer.name,total,lines.product.title')).toEqual({
      expansions: [
        { path: 'customer', collection: 'c', projection: { mode: 'include', paths: ['name'] } },
        {
          path: 'lines.product',
          collection: 'p',
          projection: { mode: 'include', paths: ['title'] },
        },
      ],
      projection: { mode: 'include', paths: ['customer', 'total', 'lines.product'] },
    });
    // Naming the reference (or what holds it) keeps the expanded item whole.
    expect(parse('lines.product:p', 'lines').expansions[0]?.projection).toBeNull();
    expect(parse('customer:c', 'customer,n')).toEqual({
      expansions: [{ path: 'customer', collection: 'c', projection: null }],
      projection: { mode: 'include', paths: ['customer', 'n'] },
    });
  });

  it('excludes below an expanded path from the expanded items only, never their _id', () => {
    expect(parse('customer:c', '-customer.email,-notes')).toEqual({
      expansions: [
        { path: 'customer', collection: 'c', projection: { mode: 'exclude', paths: ['email'] } },
      ],
      projection: { mode: 'exclude', paths: ['notes'] },
    });
    expect(parse('customer:c', '-customer.email').projection).toBeNull();
    expect(() => parse('customer:c', '-customer._id')).toThrow(ValidationFailedError);
  });
});

describe('references', () => {
  const item = {
    a: 'x',
    b: ['x', 'y'],
    c: [{ d: 'x' }, { d: ['y', 'z'] }, 'loose', { e: 1 }, { d: 3 }],
    n: 5,
    m: ['x', 1],
    o: { p: 'y' },
    q: [{ r: [{ s: 'x' }] }],
    z: null,
  };

  it('finds ids at a path: strings, arrays of strings, through one array of objects', () => {
    expect(referenceIds(item, 'a')).toEqual(['x']);
    expect(referenceIds(item, 'b')).toEqual(['x', 'y']);
    expect(referenceIds(item, 'c.d')).toEqual(['x', 'y', 'z']);
    expect(referenceIds(item, 'o.p')).toEqual(['y']);
    for (const none of ['n', 'm', 'z', 'missing', 'c.e', 'q.r.s', 'a.b'])
      expect(referenceIds(item, none)).toEqual([]);
  });

  it('replaces each id and leaves everything else as it is', () => {
    const replaced = withReferences(item, 'c.d', (id) => ({ id }));
    expect(replaced.c).toEqual([
      { d: { id: 'x' } },
      { d: [{ id: 'y' }, { id: 'z' }] },
      'loose',
      { e: 1 },
      { d: 3 },
    ]);
    expect(withReferences(item, 'q.r.s', () => 'never')).toEqual(item);
    expect(withReferences(item, 'n', () => 'never')).toEqual(item);
    expect(item.c[0]).toEqual({ d: 'x' });
  });
});

describe('expandedETag', () => {
  it('differs from the item tag and changes with the expanded answer', () => {
    const tag = '"abc"';
    const one = expandedETag(tag, { a: { _id: 'x', v: 1 } });
    expect(one).not.toBe(tag);
    expect(one).toMatch(/^"abc\+[\w-]{16}"$/);
    expect(expandedETag(tag, { a: { _id: 'x', v: 2 } })).not.toBe(one);
    expect(expandedETag(tag, { a: { _id: 'x', v: 1 } })).toBe(one);
  });
});
