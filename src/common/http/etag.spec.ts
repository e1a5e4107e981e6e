import { ValidationFailedError } from '../errors';
import {
  acceptedRevisions,
  ifMatchHolds,
  ifNoneMatchHits,
  parseETagList,
  readIfMatch,
  readWritePreconditions,
  revisionETag,
  revisionsOf,
} from './etag';

describe('parseETagList', () => {
  it('reads *, one tag, weak tags and lists with empty elements and whitespace', () => {
    expect(parseETagList('*')).toBe('*');
    expect(parseETagList(' * ')).toBe('*');
    expect(parseETagList('"a.1"')).toEqual([{ weak: false, opaque: 'a.1' }]);
    expect(parseETagList('W/"a.1"')).toEqual([{ weak: true, opaque: 'a.1' }]);
    expect(parseETagList(' "a" ,, W/"b",\t"c" ,')).toEqual([
      { weak: false, opaque: 'a' },
      { weak: true, opaque: 'b' },
      { weak: false, opaque: 'c' },
    ]);
  });

  it('keeps commas and other etagc characters inside quotes', () => {
    expect(parseETagList('"a,b", ""')).toEqual([
      { weak: false, opaque: 'a,b' },
      { weak: false, opaque: '' },
    ]);
  });

  it.each([
    '',
    '   ',
    ',',
    'a.1',
    '"a.1',
    '"a" "b"',
    '"a"b',
    'w/"a"',
    'W/ "a"',
    '*, "a"',
    '"a", *',
    '"a b"',
    '"a\u0001"',
  ])('refuses %j', (value) => {
    expect(parseETagList(value)).toBeNull();
  });
});

describe('readIfMatch', () => {
  it('tells absent, * and tags apart, keeping only strong tags', () => {
    expect(readIfMatch(undefined)).toEqual({ kind: 'absent' });
    expect(readIfMatch('*')).toEqual({ kind: 'any' });
    expect(readIfMatch('W/"a.1", "b.2"')).toEqual({ kind: 'tags', opaques: ['b.2'] });
    expect(readIfMatch('W/"a.1"')).toEqual({ kind: 'tags', opaques: [] });
  });

  it('refuses a malformed header with a 400 naming it', () => {
    expect(() => readIfMatch('5')).toThrow(ValidationFailedError);
    try {
      readIfMatch('5');
    } catch (error) {
      expect((error as ValidationFailedError).errors).toEqual([
        { field: 'If-Match', message: expect.stringContaining('quoted entity tags') as string },
      ]);
    }
  });
});

describe('readWritePreconditions', () => {
  it('reads If-Match, joining a header sent twice', () => {
    expect(readWritePreconditions({ 'if-match': ['"a.1"', '"b.2"'] })).toEqual({
      kind: 'tags',
      opaques: ['a.1', 'b.2'],
    });
    expect(readWritePreconditions({})).toEqual({ kind: 'absent' });
  });

  it('refuses If-None-Match on a write instead of ignoring it', () => {
    expect(() => readWritePreconditions({ 'if-none-match': '*' })).toThrow(ValidationFailedError);
  });
});

describe('ifMatchHolds (strong comparison)', () => {
  const current = revisionETag({ identity: 'abc', revision: 3 });

  it('holds without If-Match, whether or not the resource exists', () => {
    expect(ifMatchHolds({ kind: 'absent' }, current)).toBe(true);
    expect(ifMatchHolds({ kind: 'absent' }, null)).toBe(true);
  });

  it('holds for * only when the resource exists', () => {
    expect(ifMatchHolds({ kind: 'any' }, current)).toBe(true);
    expect(ifMatchHolds({ kind: 'any' }, null)).toBe(false);
  });

  it('holds when one listed strong tag is the current one', () => {
    expect(ifMatchHolds(readIfMatch('"abc.2", "abc.3"'), current)).toBe(true);
    expect(ifMatchHolds(readIfMatch('"abc.2"'), current)).toBe(false);
    expect(ifMatchHolds(readIfMatch('W/"abc.3"'), current)).toBe(false);
    expect(ifMatchHolds(readIfMatch('"abc.3"'), null)).toBe(false);
  });
});

describe('ifNoneMatchHits (weak comparison)', () => {
  const current = '"abc.3"';

  it('hits the current tag, weak or strong, alone or in a list, and *', () => {
    expect(ifNoneMatchHits('"abc.3"', current)).toBe(true);
    expect(ifNoneMatchHits('W/"abc.3"', current)).toBe(true);
    expect(ifNoneMatchHits('"abc.1", "abc.3"', current)).toBe(true);
    expect(ifNoneMatchHits(['"abc.1"', '"abc.3"'], current)).toBe(true);
    expect(ifNoneMatchHits('*', current)).toBe(true);
  });

  it('misses other tags and an absent header', () => {
    expect(ifNoneMatchHits('"abc.2"', current)).toBe(false);
    expect(ifNoneMatchHits('"abc.30"', current)).toBe(false);
    expect(ifNoneMatchHits(undefined, current)).toBe(false);
  });

  it('refuses a malformed header', () => {
    expect(() => ifNoneMatchHits('abc.3', current)).toThrow(ValidationFailedError);
  });
});

describe('revision tags', () => {
  it('formats identity and revision as a strong tag', () => {
    expect(revisionETag({ identity: '665f1c2a9b1e8a0012345678', revision: 0 })).toBe(
      '"665f1c2a9b1e8a0012345678.0"',
    );
  });

  it('reads back only tags of that form, with canonical safe revisions', () => {
    const ifMatch = readIfMatch(
      '"a.1", "b.0", "c.01", "d.-1", "e.1.5", ".2", "f.", "g", "h.99999999999999999", "i/j.2", W/"k.3"',
    );
    expect(ifMatch.kind).toBe('tags');
    if (ifMatch.kind !== 'tags') return;
    expect(acceptedRevisions(ifMatch)).toEqual([
      { identity: 'a', revision: 1 },
      { identity: 'b', revision: 0 },
    ]);
  });

  it('gives the revisions of one resource, or undefined when any will do', () => {
    expect(revisionsOf(readIfMatch('"a.1", "b.2", "a.4"'), 'a')).toEqual([1, 4]);
    expect(revisionsOf(readIfMatch('"b.2"'), 'a')).toEqual([]);
    expect(revisionsOf(readIfMatch('*'), 'a')).toBeUndefined();
    expect(revisionsOf(readIfMatch(undefined), 'a')).toBeUndefined();
  });
});
