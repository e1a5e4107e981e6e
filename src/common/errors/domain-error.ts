import { ERROR_CATALOG, type ErrorCode } from './error-codes';

/** One offending input, as listed in a problem's `errors` array. */
export interface FieldError {
  /** Where the problem is: a body path (`item.a.b`), a query key (`after[name]`) or a header. */
  field: string;
  message: string;
}

/** A problem's members but its status (DomainError.members). */
export interface ProblemMembers {
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/**
 * Errors that the rules of the service raise. Services throw them; the problem filter turns them
 * into RFC 9457 responses using ERROR_CATALOG, so no service speaks HTTP.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly errors?: FieldError[],
    /** Extra members for the problem body, e.g. `{ existingId }` on a 409. */
    readonly extensions?: Record<string, unknown>,
  ) {
    super(detail);
    this.name = 'DomainError';
  }

  get status(): number {
    return ERROR_CATALOG[this.code].status;
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
      'VALIDATION_FAILED',
      detail ??
        `${errors.length} field${errors.length === 1 ? ' is' : 's are'} not valid: ${errors.map((e) => e.field).join(', ')}`,
      errors,
    );
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(detail = 'Send a valid API key in the X-Api-Key header (or Authorization: Bearer).') {
    super('UNAUTHENTICATED', detail);
  }
}

export class ForbiddenError extends DomainError {
  constructor(detail: string) {
    super('FORBIDDEN', detail);
  }
}

/** The database did not answer in time or could not be reached. */
export class DatabaseUnavailableError extends DomainError {
  constructor() {
    super('DATABASE_UNAVAILABLE', 'The database is unavailable or too slow. Retry later.');
  }
}

/** A request body of another media type than JSON. */
export class UnsupportedMediaTypeError extends DomainError {
  constructor(detail: string) {
    super('UNSUPPORTED_MEDIA_TYPE', detail);
  }
}

/** A request body in a Content-Encoding the service does not decode. */
export class UnsupportedContentEncodingError extends DomainError {
  constructor(detail: string) {
    super('UNSUPPORTED_CONTENT_ENCODING', detail);
  }
}

/** A query string the service cannot read as a whole. */
export class InvalidQueryError extends DomainError {
  constructor(detail: string) {
    super('INVALID_QUERY', detail);
  }
}

/** A request body over a route's size limit, refused from its Content-Length. */
export class PayloadTooLargeError extends DomainError {
  constructor(limitBytes: number) {
    super('PAYLOAD_TOO_LARGE', `The request body exceeds the limit of ${limitBytes} bytes.`);
  }
}
