import { COMMON_ERRORS } from './common.errors';
import type { ErrorEntry } from './error-entry';

/** One offending input, as listed in a problem's `errors` array. */
export interface FieldError {
  /** Where the problem is: a body path (`item.a.b`), a query key (`after[name]`) or a header. */
  field: string;
  message: string;
}

/** A problem's members but its status (DomainError.members). */
export interface ProblemMembers {
  code: string;
  detail: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/**
 * Errors that the rules of the service raise. Services throw them; the problem filter turns them
 * into RFC 9457 responses with the status and title of their entry (the module's error table), so
 * no service speaks HTTP.
 */
export class DomainError extends Error {
  readonly code: string;

  constructor(
    readonly entry: ErrorEntry,
    detail: string,
    readonly errors?: FieldError[],
    /** Extra members for the problem body, e.g. `{ existingId }` on a 409. */
    readonly extensions?: Record<string, unknown>,
  ) {
    super(detail);
    this.name = 'DomainError';
    this.code = entry.code;
  }

  get status(): number {
    return this.entry.status;
  }

  /**
   * What the problem says besides its status: `code`, `detail`, the field `errors` and the
   * extensions — the per-item answer of a request that answers many (bulk creates, imports).
   */
  members(): ProblemMembers {
    return {
      code: this.code,
      detail: this.message,
      ...(this.errors ? { errors: this.errors } : {}),
      ...(this.extensions ?? {}),
    };
  }

  /** Response headers the problem carries (e.g. the current ETag of a 412). */
  get headers(): Record<string, string> {
    return {};
  }
}

export class ValidationFailedError extends DomainError {
  constructor(errors: FieldError[], detail?: string) {
    super(
      COMMON_ERRORS.VALIDATION_FAILED,
      detail ??
        `${errors.length} field${errors.length === 1 ? ' is' : 's are'} not valid: ${errors.map((e) => e.field).join(', ')}`,
      errors,
    );
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(detail = 'Send a valid API key in the X-Api-Key header (or Authorization: Bearer).') {
    super(COMMON_ERRORS.UNAUTHENTICATED, detail);
  }
}

export class ForbiddenError extends DomainError {
  constructor(detail: string) {
    super(COMMON_ERRORS.FORBIDDEN, detail);
  }
}

/** The database did not answer in time or could not be reached. */
export class DatabaseUnavailableError extends DomainError {
  constructor() {
    super(
      COMMON_ERRORS.DATABASE_UNAVAILABLE,
      'The database is unavailable or too slow. Retry later.',
    );
  }
}

/** A request body of another media type than JSON. */
export class UnsupportedMediaTypeError extends DomainError {
  constructor(detail: string) {
    super(COMMON_ERRORS.UNSUPPORTED_MEDIA_TYPE, detail);
  }
}

/** A request body in a Content-Encoding the service does not decode. */
export class UnsupportedContentEncodingError extends DomainError {
  constructor(detail: string) {
    super(COMMON_ERRORS.UNSUPPORTED_CONTENT_ENCODING, detail);
  }
}

/** A query string the service cannot read as a whole. */
export class InvalidQueryError extends DomainError {
  constructor(detail: string) {
    super(COMMON_ERRORS.INVALID_QUERY, detail);
  }
}

/** A request body over a route's size limit, refused from its Content-Length. */
export class PayloadTooLargeError extends DomainError {
  constructor(limitBytes: number) {
    super(
      COMMON_ERRORS.PAYLOAD_TOO_LARGE,
      `The request body exceeds the limit of ${limitBytes} bytes.`,
    );
  }
}
