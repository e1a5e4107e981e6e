import { WORDS_FIELD } from '../query/data.constants';
import { TooManyWordsError } from '../data.errors';
import { itemWords, type WordRules } from './tokenizer';

/**
 * A collection's search configuration, kept on its registry entry as `rules.search` (beside
 * schema, expiry and access: every instance reads it with the entry and sees a change within
 * REGISTRY_CACHE_MS). From the moment it is stored, every write keeps its items' word lists
 * (WORDS_FIELD) exact in the same database write as the item; the build fills the lists of the
 * items written before, and `state` says when `q` can answer.
 */
export const SEARCH_STATES = ['building', 'ready', 'failed'] as const;
export type SearchState = (typeof SEARCH_STATES)[number];

export interface SearchRule extends WordRules {
  fields: string[];
  /** Counts the configurations of the collection: each PUT stores the next. */
  version: number;
  state: SearchState;
  /** When the build failed: why (a problem code and its detail). */
  failure?: { code: string; detail: string };
  changedAt: Date;
}

/** The name of the multikey index on the word lists; it holds one of the collection's index slots. */
export const WORDS_INDEX = 'search_words';

/** What holds a search configuration: a registry entry (NativeCollection, RegisteredCollection). */
export type Searchable = { readonly rules?: { readonly search?: SearchRule } } | null;

/** The search configuration of a registry entry, when it has one. */
export function searchRuleOf(target: Searchable): SearchRule | null {
  return target?.rules?.search ?? null;
}

/**
 * Whether writing these paths (dotted, as an update's `$set` names them) can change an item's
 * words: a path equal to a search field, inside one, or holding one.
 */
export function touchesSearch(rule: WordRules, paths: Iterable<string>): boolean {
  for (const path of paths) {
    for (const field of rule.fields) {
      if (path === field || path.startsWith(`${field}.`) || field.startsWith(`${path}.`))
        return true;
    }
  }
  return false;
}

/**
 * The word list an item (as it will be stored: the client's fields, whole) gets under `rule`,
 * as the `$set`/insert member that stores it; 413 TOO_MANY_WORDS past `maxWords`.
 */
export function wordsOf(
  rule: WordRules,
  item: Record<string, unknown>,
  maxWords: number,
): { [WORDS_FIELD]: string[] } {
  const words = itemWords(item, rule);
  if (words.length > maxWords) throw new TooManyWordsError(words.length, maxWords);
  return { [WORDS_FIELD]: words };
}

/**
 * The member an item written to `target` stores beside its fields: its word list when the
 * collection has a search configuration (in any state: writes keep lists exact while the build
 * runs), nothing otherwise.
 */
export function wordsFor(
  target: Searchable,
  item: Record<string, unknown>,
  maxWords: number,
): { [WORDS_FIELD]?: string[] } {
  const rule = searchRuleOf(target);
  return rule ? wordsOf(rule, item, maxWords) : {};
}
