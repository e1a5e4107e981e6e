import { readIfMatch } from '../../common/http/etag';
import {
  afterWrite,
  itemETag,
  itemRevision,
  newRevisionRecord,
  revisionCondition,
} from './item-revision';

const createdAt = new Date('2025-06-01T12:00:00.123Z');
const legacyIdentity = `l${createdAt.getTime().toString(36)}`;

describe('item revisions', () => {
  it('makes a new creation token for every item, at revision 0', () => {
    const a = newRevisionRecord();
    const b = newRevisionRecord();
    expect(a.n).toBe(0);
    expect(a.c).toMatch(/^[0-9a-f]{24}$/);
    expect(a.c).not.toBe(b.c);
  });

  it('tags an item by its creation token and count', () => {
    const item = { _id: 'x', _createdAt: createdAt, _revision: { c: 'a'.repeat(24), n: 3 } };
    expect(itemETag(item)).toBe(`"${'a'.repeat(24)}.3"`);
  });

  it('counts an item without a record as revision 0 of an identity from its _createdAt', () => {
    expect(itemRevision({ _id: 'x', _createdAt: createdAt })).toEqual({
      identity: legacyIdentity,
      revision: 0,
    });
    // Updated once since: the count exists, the creation token does not.
    expect(itemETag({ _id: 'x', _createdAt: createdAt, _revision: { n: 1 } })).toBe(
      `"${legacyIdentity}.1"`,
    );
  });

  it('adds no condition without If-Match or for *', () => {
    expect(revisionCondition(readIfMatch(undefined))).toBeUndefined();
    expect(revisionCondition(readIfMatch('*'))).toBeUndefined();
  });

  it('filters on the token and count an If-Match tag names', () => {
    const token = 'b'.repeat(24);
    expect(revisionCondition(readIfMatch(`"${token}.2"`))).toEqual({
      '_revision.c': token,
      '_revision.n': 2,
    });
  });

  it('filters a tag of an item stored without a record on its _createdAt, counting 0 as missing', () => {
    expect(revisionCondition(readIfMatch(`"${legacyIdentity}.0"`))).toEqual({
      '_revision.c': { $exists: false },
      _createdAt: createdAt,
      '_revision.n': { $in: [0, null] },
    });
  });

  it('accepts any of several tags, and matches nothing for tags no item can have', () => {
    const token = 'c'.repeat(24);
    expect(revisionCondition(readIfMatch(`"${token}.1", "other.2", "${token}.4"`))).toEqual({
      $or: [
        { '_revision.c': token, '_revision.n': 1 },
        { '_revision.c': token, '_revision.n': 4 },
      ],
    });
    for (const header of ['"other.2"', 'W/"x.1"', '"lzzzzzzzzzzzzz.0"'])
      expect(revisionCondition(readIfMatch(header))).toEqual({ '_revision.n': { $in: [] } });
  });
});

describe('afterWrite', () => {
  const now = new Date('2026-01-02T03:04:05.006Z');

  it('applies a $set with its write counted, as the database would', () => {
    const before = {
      _id: 'x',
      a: 1,
      o: { p: 1 },
      _updatedAt: createdAt,
      _revision: { c: 'c', n: 2 },
    };
    expect(afterWrite(before, { a: 2, 'o.q': 3, n: null, _updatedAt: now })).toEqual({
      _id: 'x',
      a: 2,
      o: { p: 1, q: 3 },
      n: null,
      _updatedAt: now,
      _revision: { c: 'c', n: 3 },
    });
    expect(before.o).toEqual({ p: 1 });
  });

  it('makes the count of an item without a record', () => {
    expect(afterWrite({ _id: 'x' }, { a: 1 })).toEqual({ _id: 'x', a: 1, _revision: { n: 1 } });
  });

  it('leaves a path through an array to the database', () => {
    expect(afterWrite({ _id: 'x', tags: ['a'] }, { 'tags.0': 'b' })).toBeNull();
    expect(afterWrite({ _id: 'x', l: [{ q: 1 }] }, { 'l.0.q': 2 })).toBeNull();
    expect(afterWrite({ _id: 'x', tags: ['a'] }, { tags: ['b'] })).not.toBeNull();
  });
});
