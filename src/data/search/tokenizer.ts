import { isPlainObject } from '../../common/json';

/**
 * The words of full-text search, one definition for items and queries, so that a query word
 * matches an item word exactly when both come out of here the same:
 *
 * 1. Unicode NFKD (compatibility forms unified: ｆｕｌｌ-width → full-width, ﬁ → fi, ① → 1),
 *    lower-cased, combining marks dropped (é → e, ü → u), then NFC (Hangul syllables composed
 *    again).
 * 2. Split on every character that is not a letter or a digit (`\p{L}`, `\p{N}`): white space,
 *    punctuation, symbols, emoji.
 * 3. Characters of Chinese, Japanese and Korean scripts (Han, Hiragana, Katakana, Hangul) are
 *    each a word of their own: those languages do not separate words by spaces, and
 *    single-character words make every CJK substring query a conjunction of its characters
 *    (no dictionary needed, the same on every database). They count whatever minTokenLength is.
 * 4. Other words shorter than the configuration's minTokenLength are not indexed; longer than
 *    MAX_WORD_LENGTH, only their first MAX_WORD_LENGTH characters are (an index key stays small,
 *    and a query word can be no longer).
 */

/** The longest word a query may hold, and the length words are indexed to. */
export const MAX_WORD_LENGTH = 32;

/** The most words one query (`q`) may hold. */
export const MAX_QUERY_WORDS = 8;

/** The bounds and default of a configuration's minTokenLength. */
export const MIN_TOKEN_LENGTH = { min: 1, max: MAX_WORD_LENGTH, default: 2 } as const;

const CJK = String.raw`\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}`;
/** A CJK character alone, or a run of other letters and digits. */
const WORD = new RegExp(String.raw`[${CJK}]|(?:(?![${CJK}])[\p{L}\p{N}])+`, 'gu');
const CJK_CHARACTER = new RegExp(String.raw`^[${CJK}]$`, 'u');
const MARKS = /\p{M}/gu;

/** Steps 1 to 3: the words of a text, in order, repeated ones included. */
export function splitWords(text: string): string[] {
  const folded = text.normalize('NFKD').toLowerCase().normalize('NFKD').replace(MARKS, '');
  return folded.normalize('NFC').match(WORD) ?? [];
}

/** Whether a word is one CJK character (exempt from minTokenLength). */
function isCjk(word: string): boolean {
  return CJK_CHARACTER.test(word);
}

/** A word's length in characters (code points). */
function lengthOf(word: string): number {
  return [...word].length;
}

/** The word cut to MAX_WORD_LENGTH characters. */
function capped(word: string): string {
  return lengthOf(word) <= MAX_WORD_LENGTH ? word : [...word].slice(0, MAX_WORD_LENGTH).join('');
}

/** Whether the item's words hold this word (step 4's length floor). */
function indexable(word: string, minTokenLength: number): boolean {
  return isCjk(word) || lengthOf(word) >= minTokenLength;
}

/** What a configuration says about the words of its items. */
export interface WordRules {
  /** The fields searched: dotted paths, through arrays as MongoDB reads them. */
  fields: readonly string[];
  minTokenLength: number;
}

/**
 * The strings and numbers at a dotted path: through arrays (each element) and, at the path's
 * end, every string and number inside the value (nested objects and arrays included). Numbers
 * count as their decimal text; booleans and null hold no words.
 */
export function textsAt(doc: unknown, path: readonly string[]): string[] {
  if (Array.isArray(doc)) return doc.flatMap((element) => textsAt(element, path));
  if (path.length === 0) return leafTexts(doc);
  if (!isPlainObject(doc)) return [];
  const [head, ...rest] = path as [string, ...string[]];
  return Object.hasOwn(doc, head) ? textsAt(doc[head], rest) : [];
}

function leafTexts(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(leafTexts);
  if (isPlainObject(value)) return Object.values(value).flatMap(leafTexts);
  return [];
}

/**
 * An item's word list: every indexable word of its search fields, once each, sorted (so equal
 * items store equal lists). Its length is what SEARCH_MAX_WORDS_PER_ITEM bounds.
 */
export function itemWords(item: Record<string, unknown>, rules: WordRules): string[] {
  const words = new Set<string>();
  for (const field of rules.fields) {
    for (const text of textsAt(item, field.split('.'))) {
      for (const word of splitWords(text)) {
        if (indexable(word, rules.minTokenLength)) words.add(capped(word));
      }
    }
  }
  return [...words].sort();
}

/** A query's words: every one must be among the item's, the last as a prefix of one. */
export interface QueryWords {
  /** Whole words (distinct). */
  exact: string[];
  /** The last word, matched as the start of a word; null when the query has no words. */
  prefix: string | null;
}

/** Why a query cannot be run: too many words, or a word too long. */
export type QueryWordsProblem = { problem: string };

/**
 * The words of `q`: split as items are; more than MAX_QUERY_WORDS words, or one longer than
 * MAX_WORD_LENGTH characters, is a problem. Whole words below minTokenLength are left out (no
 * item holds them); the last word stays, since it is a prefix. No word at all: the query asks
 * for nothing, and every item matches.
 */
export function queryWords(q: string, minTokenLength: number): QueryWords | QueryWordsProblem {
  const words = splitWords(q);
  if (words.length > MAX_QUERY_WORDS)
    return { problem: `must hold at most ${MAX_QUERY_WORDS} words (it holds ${words.length})` };
  const long = words.find((word) => lengthOf(word) > MAX_WORD_LENGTH);
  if (long !== undefined)
    return { problem: `holds a word longer than ${MAX_WORD_LENGTH} characters` };
  const prefix = words.pop() ?? null;
  const exact = [...new Set(words.filter((word) => indexable(word, minTokenLength)))];
  return { exact, prefix };
}

/** Whether an item's word list answers the query (the in-memory form of the database filter). */
export function wordsMatch(words: readonly string[], query: QueryWords): boolean {
  const held = new Set(words);
  if (!query.exact.every((word) => held.has(word))) return false;
  const { prefix } = query;
  return prefix === null || words.some((word) => word.startsWith(prefix));
}
