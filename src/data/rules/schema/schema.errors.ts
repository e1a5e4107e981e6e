import { DomainError, type FieldError } from '../../../common/errors';
import { DATA_ERRORS } from '../../data.errors';

/** One way an item breaks its collection's schema. */
export interface SchemaError {
  /** JSON Pointer (RFC 6901) to the value in the item's own fields; `''` is the item. */
  pointer: string;
  /** The schema keyword the value fails (`type`, `required`, `pattern`, …). */
  keyword: string;
  message: string;
}

/** An error of SCHEMA_VIOLATION's `errors`: where (`pointer`, and as a body path `field`), which keyword, why. */
export type SchemaViolationEntry = FieldError & SchemaError;

/** The body path of a pointer into the item, as other problems name fields (`item.address.city`). */
function fieldOf(pointer: string): string {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return ['item', ...segments].join('.');
}

/** 422: the item as it would be stored breaks the collection's schema (action `error`); nothing was written. */
export class SchemaViolationError extends DomainError {
  constructor(errors: SchemaError[], itemId?: string) {
    const entries: SchemaViolationEntry[] = errors.map((e) => ({
      field: fieldOf(e.pointer),
      ...e,
    }));
    super(
      DATA_ERRORS.SCHEMA_VIOLATION,
      itemId === undefined
        ? `The item does not follow the collection's schema (${errors.length} error${errors.length === 1 ? '' : 's'}); nothing was written.`
        : `The item ${itemId} would not follow the collection's schema after the update; no item was written.`,
      entries,
      itemId === undefined ? undefined : { itemId },
    );
  }
}

export class SchemaNotFoundError extends DomainError {
  constructor(collection: string) {
    super(DATA_ERRORS.SCHEMA_NOT_FOUND, `The collection '${collection}' has no schema.`);
  }
}

/**
 * 400: a collection schema beyond what an instance compiles or checks within its bounds; `limit`
 * names the bound (SCHEMA_MAX_EXPANDED_NODES, SCHEMA_PATTERN_MAX_PROGRAM, SCHEMA_COMPILE_MAX_MS,
 * SCHEMA_CHECK_MAX_MS) and the detail says how it was passed. Nothing was stored or written.
 */
export class SchemaTooComplexError extends DomainError {
  constructor(
    readonly limit: string,
    what: string,
  ) {
    super(DATA_ERRORS.SCHEMA_TOO_COMPLEX, `The schema ${what} (${limit}); nothing was written.`);
  }
}
