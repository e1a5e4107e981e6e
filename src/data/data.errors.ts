import { HttpStatus } from '@nestjs/common';
import { COMMON_ERRORS, defineErrors, DomainError } from '../common/errors';
import type { LimitMembers } from '../plans';
import { COLLECTION_NAME_RULE } from './query/data.constants';

/**
 * The codes data owns: collections, items, indexes, collection rules and schemas, imports, a
 * collection's move. Profile answers AMBIGUOUS_MATCH too, for an accountId under several clientIds.
 */
export const DATA_ERRORS = defineErrors({
  INVALID_COLLECTION_NAME: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The collection name is not valid',
  },
  PROTECTED_INDEX: { status: HttpStatus.BAD_REQUEST, title: 'The index cannot be changed' },
  PROTECTED_FIELD: {
    status: HttpStatus.BAD_REQUEST,
    title: "The request names a field the collection's access rules hide from this key",
  },
  ACCESS_RULE: {
    status: HttpStatus.FORBIDDEN,
    title: "The collection's access rules do not allow this write for this key",
  },
  SCHEMA_TOO_COMPLEX: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The collection schema is beyond what an instance checks within its bounds',
  },
  MALFORMED_LINE: {
    status: HttpStatus.BAD_REQUEST,
    title: 'A line of the import is not a record of the export format',
  },
  DIGEST_MISMATCH: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The end record does not match the lines before it',
  },
  ITEM_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'No item matches' },
  INDEX_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The index does not exist' },
  COLLECTION_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The collection does not exist' },
  EXPIRY_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The collection has no expiry rule' },
  ELEMENT_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'No array element matches' },
  SCHEMA_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The collection has no schema' },
  DUPLICATE_ITEM: { status: HttpStatus.CONFLICT, title: 'An item with this value exists already' },
  /** Data items and sub profiles alike: the request names more than one; nothing was done. */
  AMBIGUOUS_MATCH: { status: HttpStatus.CONFLICT, title: 'More than one resource matches' },
  NOT_AN_ARRAY: { status: HttpStatus.CONFLICT, title: 'The field does not hold an array' },
  WRITE_CONFLICT: {
    status: HttpStatus.CONFLICT,
    title: 'The resource kept changing while the request ran',
  },
  COLLECTION_QUOTA_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: 'The collection quota is used up',
  },
  INDEX_QUOTA_EXCEEDED: { status: HttpStatus.CONFLICT, title: 'The index quota is used up' },
  ITEM_QUOTA_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: 'The collection holds as many items as allowed',
  },
  INDEX_CONFLICT: {
    status: HttpStatus.CONFLICT,
    title: 'The index conflicts with an existing one',
  },
  SCHEMA_VIOLATION: {
    status: HttpStatus.UNPROCESSABLE_ENTITY,
    title: "The item does not follow the collection's schema",
    example: {
      errors: [{ field: 'item.age', pointer: '/age', keyword: 'minimum', message: 'must be >= 0' }],
    },
  },
  FILE_NOT_IMPORTED: {
    status: HttpStatus.FAILED_DEPENDENCY,
    title: 'The line belongs to a file of the import that failed on an earlier line',
  },
  LINE_TOO_LONG: {
    status: HttpStatus.PAYLOAD_TOO_LARGE,
    title: 'A line of the import is longer than IMPORT_MAX_LINE_BYTES',
  },
  TOO_MANY_LINES: {
    status: HttpStatus.PAYLOAD_TOO_LARGE,
    title: 'The import has more lines than IMPORT_MAX_LINES',
  },
  SHUTTING_DOWN: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: 'The instance is shutting down; retry, another instance will answer',
  },
  COLLECTION_MOVING: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: 'The collection is being moved; its writes are paused briefly',
  },
  UNIQUE_INDEX_DUPLICATES: {
    status: HttpStatus.CONFLICT,
    title: 'Existing items break the unique index',
  },
  SEARCH_NOT_CONFIGURED: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The collection has no search configuration',
  },
  SEARCH_NOT_FOUND: {
    status: HttpStatus.NOT_FOUND,
    title: 'The collection has no search configuration',
  },
  SEARCH_BUILDING: {
    status: HttpStatus.CONFLICT,
    title: "The collection's word lists are being built; search answers when they are ready",
  },
  SEARCH_FAILED: {
    status: HttpStatus.CONFLICT,
    title: "The build of the collection's word lists failed; configure search again",
  },
  TOO_MANY_WORDS: {
    status: HttpStatus.PAYLOAD_TOO_LARGE,
    title: 'The item holds more words in its search fields than SEARCH_MAX_WORDS_PER_ITEM',
  },
});

/** The errors of the data module; each fixes one code. */

export class InvalidCollectionNameError extends DomainError {
  constructor() {
    super(
      DATA_ERRORS.INVALID_COLLECTION_NAME,
      'Collection names are 1-64 characters: a letter, then letters, digits, _ or -.',
      [{ field: 'collection', message: `must match ${COLLECTION_NAME_RULE}` }],
    );
  }
}

/** The deployment's collection limit (MAX_COLLECTIONS), reached without a plan. */
export class CollectionQuotaExceededError extends DomainError {
  constructor(members: LimitMembers) {
    super(
      DATA_ERRORS.COLLECTION_QUOTA_EXCEEDED,
      `This namespace has ${members.usage} collections; at most ${members.max} are allowed (MAX_COLLECTIONS). Drop some to create others.`,
      undefined,
      { ...members },
    );
  }
}

/** An import body over the deployment's IMPORT_MAX_BYTES, without a plan. */
export class ImportTooLargeError extends DomainError {
  constructor(members: LimitMembers) {
    super(
      COMMON_ERRORS.PAYLOAD_TOO_LARGE,
      `The import body has ${members.usage} bytes or more; at most ${members.max} are read (IMPORT_MAX_BYTES). Split it into several imports.`,
      undefined,
      { ...members },
    );
  }
}

/**
 * A create refused because the collection holds `max` items (MAX_ITEMS_PER_COLLECTION, no plan
 * active): the problem carries the members of PLAN_LIMIT_EXCEEDED, with `plan: null`.
 */
export class ItemQuotaExceededError extends DomainError {
  constructor(max: number, usage: number) {
    super(
      DATA_ERRORS.ITEM_QUOTA_EXCEEDED,
      `The collection holds ${usage} items; at most ${max} are allowed. Delete some first.`,
      undefined,
      { limit: 'itemsPerCollection', max, usage, plan: null },
    );
  }
}

/** A filter, sort, projection, cursor or aggregate field names a protected field (access rules). */
export class ProtectedFieldError extends DomainError {
  constructor(field: string, path: string) {
    super(
      DATA_ERRORS.PROTECTED_FIELD,
      `'${path}' is a protected field of this collection for this key: it cannot be used in ${field}.`,
      [{ field, message: `names the protected field '${path}'` }],
    );
  }
}

/** A write the collection's access rules refuse for this key (before or after the write). */
export class AccessRuleError extends DomainError {
  constructor(detail: string) {
    super(DATA_ERRORS.ACCESS_RULE, detail);
  }
}

export class ItemNotFoundError extends DomainError {
  constructor(collection: string) {
    super(DATA_ERRORS.ITEM_NOT_FOUND, `No item of collection '${collection}' matches.`);
  }
}

export class AmbiguousMatchError extends DomainError {
  constructor() {
    super(
      DATA_ERRORS.AMBIGUOUS_MATCH,
      'More than one item matches; add a filter or address the item by _id. Nothing was changed.',
    );
  }
}

/** A taken value: `existingId` names the item that holds it when the caller may see it. */
export class DuplicateItemError extends DomainError {
  constructor(detail: string, existingId?: string) {
    super(
      DATA_ERRORS.DUPLICATE_ITEM,
      detail,
      undefined,
      existingId === undefined ? undefined : { existingId },
    );
  }

  static taken(field: string, existingId: string): DuplicateItemError {
    return new DuplicateItemError(
      `An item with this ${field} exists already (_id ${existingId}).`,
      existingId,
    );
  }
}

/** The deployment's index limit per collection (MAX_INDEXES), reached without a plan. */
export class IndexQuotaExceededError extends DomainError {
  constructor(members: LimitMembers) {
    super(
      DATA_ERRORS.INDEX_QUOTA_EXCEEDED,
      `The collection has ${members.usage} indexes besides _id; at most ${members.max} are allowed (MAX_INDEXES).`,
      undefined,
      { ...members },
    );
  }
}

export class IndexConflictError extends DomainError {
  constructor(detail: string) {
    super(DATA_ERRORS.INDEX_CONFLICT, detail);
  }
}

export class UniqueIndexDuplicatesError extends DomainError {
  constructor() {
    super(
      DATA_ERRORS.UNIQUE_INDEX_DUPLICATES,
      'Existing items share values of these fields, so the unique index cannot be built. Remove the duplicates first.',
    );
  }
}

export class IndexNotFoundError extends DomainError {
  constructor(collection: string, name: string) {
    super(DATA_ERRORS.INDEX_NOT_FOUND, `Collection '${collection}' has no index '${name}'.`);
  }
}

export class ProtectedIndexError extends DomainError {
  constructor(detail = 'The _id_ index cannot be removed.') {
    super(DATA_ERRORS.PROTECTED_INDEX, detail);
  }
}

export class ElementNotFoundError extends DomainError {
  constructor(field: string) {
    super(DATA_ERRORS.ELEMENT_NOT_FOUND, `No element of the array '${field}' matches.`);
  }
}

export class NotAnArrayError extends DomainError {
  constructor(field: string) {
    super(
      DATA_ERRORS.NOT_AN_ARRAY,
      `The item's field '${field}' holds something other than an array.`,
    );
  }
}

export class WriteConflictError extends DomainError {
  constructor() {
    super(
      DATA_ERRORS.WRITE_CONFLICT,
      'The item kept changing while the request ran; nothing was written. Retry.',
    );
  }
}

/** Writes to the collection are paused for the last step of a tenant move (MOVE_MAX_WRITE_PAUSE_MS). */
export class CollectionMovingError extends DomainError {
  constructor(collection: string) {
    super(
      DATA_ERRORS.COLLECTION_MOVING,
      `The collection '${collection}' is being moved to another cluster; its writes are paused for a few seconds. Retry after the time in Retry-After.`,
    );
  }

  override get headers(): Record<string, string> {
    return { 'Retry-After': '1' };
  }
}

export class CollectionNotFoundError extends DomainError {
  constructor(collection: string) {
    super(
      DATA_ERRORS.COLLECTION_NOT_FOUND,
      `The collection '${collection}' does not exist in this branch.`,
    );
  }
}

export class ExpiryNotFoundError extends DomainError {
  constructor(collection: string) {
    super(
      DATA_ERRORS.EXPIRY_NOT_FOUND,
      `The collection '${collection}' has no expiry rule in this branch.`,
    );
  }
}

/** `q` on a collection without a search configuration. */
export class SearchNotConfiguredError extends DomainError {
  constructor(collection: string) {
    super(
      DATA_ERRORS.SEARCH_NOT_CONFIGURED,
      `The collection '${collection}' has no search configuration: PUT /data/${collection}/search first.`,
      [{ field: 'q', message: 'needs a search configuration of the collection' }],
    );
  }
}

/** GET or DELETE of a search configuration that does not exist. */
export class SearchNotFoundError extends DomainError {
  constructor(collection: string) {
    super(
      DATA_ERRORS.SEARCH_NOT_FOUND,
      `The collection '${collection}' has no search configuration.`,
    );
  }
}

/** `q` while the word lists of the current configuration are being built. */
export class SearchBuildingError extends DomainError {
  constructor(
    collection: string,
    private readonly retryAfterSeconds: number,
  ) {
    super(
      DATA_ERRORS.SEARCH_BUILDING,
      `The word lists of '${collection}' are being built (GET /data/${collection}/search shows the progress). Retry after the time in Retry-After.`,
    );
  }

  override get headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/** `q` after the build of the current configuration failed (GET …/search says why). */
export class SearchFailedError extends DomainError {
  constructor(collection: string) {
    super(
      DATA_ERRORS.SEARCH_FAILED,
      `The build of the word lists of '${collection}' failed (GET /data/${collection}/search says why); PUT the configuration again.`,
    );
  }
}

/** A write whose item would hold more words in its search fields than the limit. */
export class TooManyWordsError extends DomainError {
  constructor(words: number, max: number) {
    super(
      DATA_ERRORS.TOO_MANY_WORDS,
      `The item holds ${words} distinct words in the collection's search fields; at most ${max} are indexed per item (SEARCH_MAX_WORDS_PER_ITEM). Nothing was written.`,
    );
  }
}
