import { ValidationFailedError } from '../../common/errors';
import { SearchBuildingError, SearchFailedError, SearchNotConfiguredError } from '../data.errors';
import type { ItemMatch } from '../query/data-query';
import { searchRuleOf, type Searchable } from './search-rule';
import { queryWords, type QueryWords } from './tokenizer';

/**
 * `q` on a list, a count or an explain: the query's words under the collection's search
 * configuration, and the database filter they make. Every word must be in the item's word list,
 * the last one as the start of a word; there is no ranking and no match inside a word (a plain
 * multikey index serves exactly this, the same on MongoDB and FerretDB).
 */

/** The query parameter that searches; on lists, counts and explains it is no filter on a field `q`. */
export const SEARCH_PARAM = 'q';

/**
 * The seconds a `q` refused while the word lists are built is told to wait (Retry-After): the
 * registry cache's bound, the soonest an instance can see the build's end, at least 1 s.
 */
export function searchRetryAfterSeconds(registryCacheMs: number): number {
  return Math.max(1, Math.ceil(registryCacheMs / 1000));
}

/**
 * The words of `q` for `target`'s search configuration: 400 SEARCH_NOT_CONFIGURED without one,
 * 409 SEARCH_BUILDING (with Retry-After) while it is built, 409 SEARCH_FAILED after its build
 * failed, 400 VALIDATION_FAILED naming `q` for a query of too many or too long words.
 */
export function searchWordsOf(
  collection: string,
  target: Searchable,
  q: string,
  retryAfterSeconds: number,
): QueryWords {
  const rule = searchRuleOf(target);
  if (!rule) throw new SearchNotConfiguredError(collection);
  if (rule.state === 'building') throw new SearchBuildingError(collection, retryAfterSeconds);
  if (rule.state === 'failed') throw new SearchFailedError(collection);
  const words = queryWords(q, rule.minTokenLength);
  if ('problem' in words)
    throw new ValidationFailedError([{ field: SEARCH_PARAM, message: words.problem }]);
  return words;
}

/**
 * A read's match with `q` (absent or null: the match as it is): the words of the collection's
 * search configuration ANDed in, or the refusal of searchWordsOf.
 */
export function withSearch(
  match: ItemMatch,
  collection: string,
  target: Searchable,
  q: string | null | undefined,
  config: { lifecycle: { registryCacheMs: number } },
): ItemMatch {
  if (q === undefined || q === null) return match;
  const retryAfter = searchRetryAfterSeconds(config.lifecycle.registryCacheMs);
  return { ...match, words: searchWordsOf(collection, target, q, retryAfter) };
}
