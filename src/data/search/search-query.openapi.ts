import { ApiConflictResponse, ApiQuery } from '@nestjs/swagger';
import { ProblemDto } from '../../common/errors';
import { MAX_QUERY_WORDS, MAX_WORD_LENGTH } from './tokenizer';
import { SEARCH_PARAM } from './search-query';

/** The `q` parameter of a list, a count and an explain (docs/data.md, "Searching with q"). */
export const SearchQuery = () =>
  ApiQuery({
    name: SEARCH_PARAM,
    required: false,
    description:
      "Full-text search in the collection's search fields (PUT /data/{collection}/search): " +
      'the text is split into words as items are (lower-cased, accents dropped, split on ' +
      'anything not a letter or digit, CJK characters one word each); every word must be a ' +
      'word of the item, the last one as its start (`q=red sho` finds "Red shoes"). No ranking ' +
      'and no match inside a word. ANDed with the filters; sort, `fields` and the keyset ' +
      `cursors work as without it (the \`Link\` keeps \`q\`). At most ${MAX_QUERY_WORDS} words ` +
      `of at most ${MAX_WORD_LENGTH} characters (400). Without a search configuration 400 ` +
      'SEARCH_NOT_CONFIGURED; while it is built 409 SEARCH_BUILDING with Retry-After; after ' +
      'its build failed 409 SEARCH_FAILED. `q` is reserved here: filter on a field named q ' +
      'with `filter[q]=v` or `filter[q][eq]=v`.',
    schema: { type: 'string' },
    example: 'red sho',
  });

/** The 409 answers of a route that reads `q`. */
export const SearchConflictResponse = () =>
  ApiConflictResponse({
    type: ProblemDto,
    description:
      'SEARCH_BUILDING (with Retry-After: REGISTRY_CACHE_MS in seconds, at least 1): `q` while ' +
      'the word lists are built; SEARCH_FAILED: their build failed',
    headers: {
      'Retry-After': {
        description: 'Seconds to wait before retrying (SEARCH_BUILDING)',
        schema: { type: 'integer', minimum: 1 },
        required: false,
      },
    },
  });
