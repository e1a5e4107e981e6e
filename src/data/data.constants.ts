/** Client-visible names of collections: a letter, then letters, digits, _ or -; 64 at most. */
export const COLLECTION_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const COLLECTION_NAME_RULE = '^[A-Za-z][A-Za-z0-9_-]{0,63}$';

/** The owner field when a request names none (`authField`). */
export const DEFAULT_OWNER_FIELD = 'userId';

/** Fields the server writes; clients can neither set nor own by them. */
export const MANAGED_FIELDS: ReadonlySet<string> = new Set(['_id', '_createdAt', '_updatedAt']);

/** The most fields of one compound index. */
export const MAX_INDEX_FIELDS = 5;

/** Client-supplied item ids: 1–128 characters without control characters. */
export const CLIENT_ID_PATTERN = /^[^\p{Cc}]{1,128}$/u;
