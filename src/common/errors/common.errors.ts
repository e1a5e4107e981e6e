import { HttpStatus } from '@nestjs/common';
import { defineErrors } from './error-entry';

/**
 * The codes common owns: those every module may meet and none owns — the request as a whole
 * (validation, body, query, route, method, size, media type), authentication and permission,
 * preconditions, the rate limit, the database and the unexpected. The problem filter answers them
 * for errors no module raised (framework, body parser, driver). A module's own codes live in its
 * `*.errors.ts`; src/error-catalog.ts gathers them all.
 */
export const COMMON_ERRORS = defineErrors({
  VALIDATION_FAILED: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The request is not valid',
    example: {
      detail: '1 field is not valid: name',
      errors: [{ field: 'name', message: 'name must be shorter than or equal to 200 characters' }],
    },
  },
  MALFORMED_JSON: { status: HttpStatus.BAD_REQUEST, title: 'The request body is not valid JSON' },
  INVALID_QUERY: { status: HttpStatus.BAD_REQUEST, title: 'The query string is not valid' },
  INVALID_CONTENT_ENCODING: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The request body could not be decoded',
  },
  UNAUTHENTICATED: {
    status: HttpStatus.UNAUTHORIZED,
    title: 'A valid API key is required',
    example: { detail: 'Send a valid API key as X-Api-Key or Authorization: Bearer.' },
  },
  FORBIDDEN: { status: HttpStatus.FORBIDDEN, title: 'The API key does not allow this' },
  ROUTE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'No such route' },
  METHOD_NOT_ALLOWED: {
    status: HttpStatus.METHOD_NOT_ALLOWED,
    title: 'The route does not support this method',
  },
  CONFLICT: { status: HttpStatus.CONFLICT, title: 'The request conflicts with existing data' },
  PRECONDITION_FAILED: {
    status: HttpStatus.PRECONDITION_FAILED,
    title: 'The If-Match precondition does not hold',
    example: {
      detail:
        'The resource is at ETag "665f1c2a9b1e8a0012345678.4", which If-Match does not name; nothing was changed. Read it again and retry.',
    },
  },
  PAYLOAD_TOO_LARGE: {
    status: HttpStatus.PAYLOAD_TOO_LARGE,
    title: 'The request body is too large',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    title: 'The request body is not of the media type the route takes',
  },
  UNSUPPORTED_CONTENT_ENCODING: {
    status: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    title: 'The Content-Encoding of the request body is not supported',
  },
  /** The request budget (rate-limit) and the failed-authentication budget (auth) alike. */
  RATE_LIMITED: {
    status: HttpStatus.TOO_MANY_REQUESTS,
    title: 'Too many requests',
    example: {
      detail: 'Too many requests for this API key. Retry after the time in Retry-After.',
    },
  },
  INTERNAL_ERROR: {
    status: HttpStatus.INTERNAL_SERVER_ERROR,
    title: 'Internal server error',
    example: {
      detail: 'An unexpected error occurred. Quote traceId 5f0c6c1e-… when reporting it.',
    },
  },
  DATABASE_UNAVAILABLE: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: 'The database is unavailable or too slow',
    example: { detail: 'The database is unavailable or too slow. Retry later.' },
  },
});

/** An entry of a code common owns. */
export type CommonError = (typeof COMMON_ERRORS)[keyof typeof COMMON_ERRORS];
