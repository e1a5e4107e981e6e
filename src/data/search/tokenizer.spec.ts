import { itemWords, queryWords, splitWords, wordsMatch, MAX_WORD_LENGTH } from './tokenizer';
import { touchesSearch, wordsOf } from './search-rule';

describe('search words', () => {
  it('folds case, compatibility forms and accents, and splits on what is not a letter or digit', () => {
    expect(splitWords('Crème BRÛLÉE — naïve café!')).toEqual(['creme', 'brulee', 'naive', 'cafe']);
    expect(splitWords('ｆｕｌｌ-width ﬁle ①')).toEqual(['full', 'width', 'file', '1']);
    expect(splitWords('İstanbul straße')).toEqual(['istanbul', 'straße']);
    expect(splitWords('red🔥shoes, size-42')).toEqual(['red', 'shoes', 'size', '42']);
  });

  it('makes every CJK character a word of its own, Hangul syllables composed', () => {
    expect(splitWords('東京タワーabc')).toEqual(['東', '京', 'タ', 'ワ', 'ー', 'abc']);
    expect(splitWords('한국어 text')).toEqual(['한', '국', '어', 'text']);
  });

  it('lists an item’s words once each, sorted, from strings and numbers at its fields', () => {
    const item = {
      title: 'Red shoes',
      body: { text: 'red, RED and blue', n: 42 },
      tags: [{ name: 'Sale' }, { name: 'a' }],
      other: 'ignored',
      flag: true,
    };
    expect(itemWords(item, { fields: ['title', 'body', 'tags.name'], minTokenLength: 2 })).toEqual([
      '42',
      'and',
      'blue',
      'red',
      'sale',
      'shoes',
    ]);
  });

  it('keeps CJK characters whatever minTokenLength is, and cuts long words', () => {
    const long = 'x'.repeat(MAX_WORD_LENGTH + 5);
    expect(itemWords({ t: `東 a ${long}` }, { fields: ['t'], minTokenLength: 3 })).toEqual([
      'x'.repeat(MAX_WORD_LENGTH),
      '東',
    ]);
  });

  it('reads a query: the last word a prefix, short whole words left out, limits named', () => {
    expect(queryWords('Red a SHO', 2)).toEqual({ exact: ['red'], prefix: 'sho' });
    expect(queryWords('?!', 2)).toEqual({ exact: [], prefix: null });
    expect(queryWords('a b c d e f g h i', 1)).toEqual({
      problem: 'must hold at most 8 words (it holds 9)',
    });
    expect(queryWords('y'.repeat(33), 1)).toEqual({
      problem: 'holds a word longer than 32 characters',
    });
  });

  it('matches every whole word and the prefix', () => {
    const words = ['red', 'shoes'];
    expect(wordsMatch(words, { exact: ['red'], prefix: 'sho' })).toBe(true);
    expect(wordsMatch(words, { exact: ['red'], prefix: 'hoe' })).toBe(false);
    expect(wordsMatch(words, { exact: ['blue'], prefix: null })).toBe(false);
    expect(wordsMatch([], { exact: [], prefix: null })).toBe(true);
  });

  it('knows which written paths change the words, and refuses too many', () => {
    const rule = { fields: ['title', 'meta.summary'], minTokenLength: 1 };
    expect(touchesSearch(rule, ['price'])).toBe(false);
    expect(touchesSearch(rule, ['title'])).toBe(true);
    expect(touchesSearch(rule, ['meta'])).toBe(true);
    expect(touchesSearch(rule, ['meta.summary.x'])).toBe(true);
    expect(touchesSearch(rule, ['metadata'])).toBe(false);
    expect(wordsOf(rule, { title: 'a b' }, 2)).toEqual({ _words: ['a', 'b'] });
    expect(() => wordsOf(rule, { title: 'a b c' }, 2)).toThrow(/3 distinct words/);
  });
});
