import { DomainError } from '../common/errors';
import { COLLECTION_NAME_RULE } from './query/data.constants';

/** The errors of the data module; each fixes one code of the catalog. */

export class InvalidCollectionNameError extends DomainError {
  constructor() {
    super(
      'INVALID_COLLECTION_NAME',
      'Collection names are 1-64 characters: a letter, then letters, digits, _ or -.',
      [{ field: 'collection', message: `must match ${COLLECTION_NAME_RULE}` }],
    );
  }
}

export class CollectionQuotaExceededError extends DomainError {
  constructor(max: number) {
    super(
      'COLLECTION_QUOTA_EXCEEDED',
      `This namespace has ${max} collections already, the most allowed.`,
    );
  }
}

export class ItemNotFoundError extends DomainError {
  constructor(collection: string) {
    super('ITEM_NOT_FOUND', `No item of collection '${collection}' matches.`);
  }
}

export class AmbiguousMatchError extends DomainError {
  constructor() {
    super(
      'AMBIGUOUS_MATCH',
      'More than one item matches; add a filter or address the item by _id. Nothing was changed.',
    );
  }
}

/** A taken value: `existingId` names the item that holds it when the caller may see it. */
export class DuplicateItemError extends DomainError {
  constructor(detail: string, existingId?: string) {
    super(
      'DUPLICATE_ITEM',
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

export class IndexQuotaExceededError extends DomainError {
  constructor(max: number) {
    super(
      'INDEX_QUOTA_EXCEEDED',
      `The collection has ${max} indexes besides _id, the most allowed.`,
    );
  }
}

export class IndexConflictError extends DomainError {
  constructor(detail: string) {
    super('INDEX_CONFLICT', detail);
  }
}

export class UniqueIndexDuplicatesError extends DomainError {
  constructor() {
    super(
      'UNIQUE_INDEX_DUPLICATES',
      'Existing items share values of these fields, so the unique index cannot be built. Remove the duplicates first.',
    );
  }
}

export class IndexNotFoundError extends DomainError {
  constructor(collection: string, name: string) {
    super('INDEX_NOT_FOUND', `Collection '${collection}' has no index '${name}'.`);
  }
}

export class ProtectedIndexError extends DomainError {
  constructor() {
    super('PROTECTED_INDEX', 'The _id_ index cannot be removed.');
  }
}

export class ElementNotFoundError extends DomainError {
  constructor(field: string) {
    super('ELEMENT_NOT_FOUND', `No element of the array '${field}' matches.`);
  }
}

export class NotAnArrayError extends DomainError {
  constructor(field: string) {
    super('NOT_AN_ARRAY', `The item's field '${field}' holds something other than an array.`);
  }
}

export class WriteConflictError extends DomainError {
  constructor() {
    super(
      'WRITE_CONFLICT',
      'The item kept changing while the request ran; nothing was written. Retry.',
    );
  }
}

/** Writes to the collection are paused for the last step of a tenant move (MOVE_MAX_WRITE_PAUSE_MS). */
export class CollectionMovingError extends DomainError {
  constructor(collection: string) {
    super(
      'COLLECTION_MOVING',
      `The collection '${collection}' is being moved to another cluster; its writes are paused for a few seconds. Retry after the time in Retry-After.`,
    );
  }

  override get headers(): Record<string, string> {
    return { 'Retry-After': '1' };
  }
}

export class CollectionNotFoundError extends DomainError {
  constructor(collection: string) {
    super('COLLECTION_NOT_FOUND', `The collection '${collection}' does not exist in this branch.`);
  }
}

export class ExpiryNotFoundError extends DomainError {
  constructor(collection: string) {
    super('EXPIRY_NOT_FOUND', `The collection '${collection}' has no expiry rule in this branch.`);
  }
}
