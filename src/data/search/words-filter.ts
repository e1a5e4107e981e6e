import type { Document } from 'mongodb';
import { WORDS_FIELD } from '../query/data.constants';
import type { QueryWords } from './tokenizer';

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/g;

/**
 * The filter clauses of a query's words, to be `$and`-ed with the rest of the match: each whole
 * word equal to an element of the word list, the last word an anchored prefix of one (both
 * served by the multikey index). No words: no clause, every item matches.
 */
export function wordsClauses(words: QueryWords): Document[] {
  const clauses: Document[] = words.exact.map((word) => ({ [WORDS_FIELD]: word }));
  if (words.prefix !== null)
    clauses.push({
      [WORDS_FIELD]: { $regex: `^${words.prefix.replace(REGEX_SPECIAL, '\\$&')}` },
    });
  return clauses;
}
