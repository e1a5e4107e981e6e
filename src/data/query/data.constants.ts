/** Client-visible names of collections: a letter, then letters, digits, _ or -; 64 at most. */
export const COLLECTION_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const COLLECTION_NAME_RULE = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';

/** The owner field when a request names none (`authField`). */
export const DEFAULT_OWNER_FIELD = 'userId';

/**
 * The server's revision record in every item, `{c, n}`: `c` is made when the item is created
 * (never reused, so a deleted and recreated item gets another ETag), `n` counts its writes. It
 * makes the item's ETag and is never returned in item bodies; as a field name it is reserved
 * anywhere (json-guard), so no client input can write, read or name it.
 */
export const REVISION_FIELD = '_revision';

/**
 * The server's word list of an item whose collection has a search configuration
 * (src/data/search): the item's words as the tokenizer makes them, under a multikey index. Never
 * returned, exported or sent in events; reserved anywhere like the revision, so no client input
 * can write, read or name it.
 */
export const WORDS_FIELD = '_words';

/** Fields the server writes; clients can neither set nor own by them. */
export const MANAGED_FIELDS: ReadonlySet<string> = new Set(['_id', '_createdAt', '_updatedAt']);

/** The most fields of one compound index. */
export const MAX_INDEX_FIELDS = 5;

/** Client-supplied item ids: 1–128 characters without control characters. */
export const CLIENT_ID_PATTERN = /^[^\p{Cc}]{1,128}$/u;
