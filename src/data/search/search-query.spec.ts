import { ValidationFailedError } from '../../common/errors';
import { SearchBuildingError, SearchFailedError, SearchNotConfiguredError } from '../data.errors';
import { toMongoFilter } from '../query/data-query';
import { searchRetryAfterSeconds, searchWordsOf, withSearch } from './search-query';
import { wordsClauses } from './words-filter';
import type { SearchRule, SearchState } from './search-rule';

const entry = (state: SearchState) => ({
  rules: {
    search: {
      fields: ['title'],
      minTokenLength: 3,
      version: 1,
      state,
      changedAt: new Date(0),
    } satisfies SearchRule,
  },
});

describe('searchWordsOf', () => {
  it('reads the words under the configuration: short whole words left out, the last kept', () => {
    expect(searchWordsOf('notes', entry('ready'), 'Red go Shō', 5)).toEqual({
      exact: ['red'],
      prefix: 'sho',
    });
    expect(searchWordsOf('notes', entry('ready'), ' !! ', 5)).toEqual({ exact: [], prefix: null });
  });

  it('refuses a collection that cannot search, and a query of too many or too long words', () => {
    expect(() => searchWordsOf('notes', null, 'red', 5)).toThrow(SearchNotConfiguredError);
    expect(() => searchWordsOf('notes', { rules: {} }, 'red', 5)).toThrow(SearchNotConfiguredError);
    expect(() => searchWordsOf('notes', entry('failed'), 'red', 5)).toThrow(SearchFailedError);
    const building = (() => {
      try {
        searchWordsOf('notes', entry('building'), 'red', 7);
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(building).toBeInstanceOf(SearchBuildingError);
    expect((building as SearchBuildingError).headers).toEqual({ 'Retry-After': '7' });
    const tooMany = 'a b c d e f g h i';
    expect(() => searchWordsOf('notes', entry('ready'), tooMany, 5)).toThrow(ValidationFailedError);
    expect(() => searchWordsOf('notes', entry('ready'), 'x'.repeat(33), 5)).toThrow(
      ValidationFailedError,
    );
  });
});

describe('the words filter', () => {
  it('holds each whole word and the last one as an anchored literal prefix', () => {
    expect(wordsClauses({ exact: ['red', 'blue'], prefix: 'sh' })).toEqual([
      { _words: 'red' },
      { _words: 'blue' },
      { _words: { $regex: '^sh' } },
    ]);
    expect(wordsClauses({ exact: [], prefix: null })).toEqual([]);
  });

  it('is ANDed into the match, and only when q is given', () => {
    const match = { scope: { filter: { userId: 'u1' } }, conditions: [] };
    const config = { lifecycle: { registryCacheMs: 2500 } };
    expect(withSearch(match, 'notes', entry('ready'), null, config)).toBe(match);
    expect(withSearch(match, 'notes', null, undefined, config)).toBe(match);
    const searched = withSearch(match, 'notes', entry('ready'), 'red sh', config);
    expect(toMongoFilter(searched)).toEqual({
      $and: [{ userId: 'u1' }, { _words: 'red' }, { _words: { $regex: '^sh' } }],
    });
  });

  it('waits the registry cache bound while building, one second at least', () => {
    expect(searchRetryAfterSeconds(0)).toBe(1);
    expect(searchRetryAfterSeconds(2500)).toBe(3);
    expect(searchRetryAfterSeconds(5000)).toBe(5);
  });
});
