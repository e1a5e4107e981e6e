import { HttpStatus } from '@nestjs/common';

/**
 * Every machine-readable error code the API can return, with the HTTP status and title it maps to.
 * `satisfies Record<...>` makes the compiler reject a code without an entry, and `ErrorCode`
 * is derived from the keys so a typo in a `throw` does not compile.
 */
export const ERROR_CATALOG = {
  // 400
  VALIDATION_FAILED: { status: HttpStatus.BAD_REQUEST, title: 'The request is not valid' },
  MALFORMED_JSON: { status: HttpStatus.BAD_REQUEST, title: 'The request body is not valid JSON' },
  INVALID_BRANCH: { status: HttpStatus.BAD_REQUEST, title: 'The branch name is not valid' },
  INVALID_QUERY: { status: HttpStatus.BAD_REQUEST, title: 'The query string is not valid' },
  INVALID_COLLECTION_NAME: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The collection name is not valid',
  },
  PROTECTED_INDEX: { status: HttpStatus.BAD_REQUEST, title: 'The index cannot be changed' },
  SCHEMA_TOO_COMPLEX: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The collection schema is beyond what an instance checks within its bounds',
  },
  INVALID_CONTENT_ENCODING: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The request body could not be decoded',
  },
  UNKNOWN_REGION: { status: HttpStatus.BAD_REQUEST, title: 'No data cluster is in this region' },
  NO_OPEN_CLUSTER: {
    status: HttpStatus.BAD_REQUEST,
    title: 'No data cluster of the region takes new tenants',
  },
  UNKNOWN_CLUSTER: { status: HttpStatus.BAD_REQUEST, title: 'No data cluster has this name' },
  MALFORMED_LINE: {
    status: HttpStatus.BAD_REQUEST,
    title: 'A line of the import is not a record of the export format',
  },
  DIGEST_MISMATCH: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The end record does not match the lines before it',
  },
  INVALID_IDEMPOTENCY_KEY: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The Idempotency-Key header is not valid',
  },
  // 401
  UNAUTHENTICATED: { status: HttpStatus.UNAUTHORIZED, title: 'A valid API key is required' },
  // 403
  FORBIDDEN: { status: HttpStatus.FORBIDDEN, title: 'The API key does not allow this' },
  BRANCH_MISMATCH: { status: HttpStatus.FORBIDDEN, title: 'The branch contradicts the API key' },
  FILE_LINK_INVALID: {
    status: HttpStatus.FORBIDDEN,
    title: 'The file link is not one the service signed',
  },
  // 404
  ROUTE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'No such route' },
  PROFILE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The profile does not exist' },
  PROJECT_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The project does not exist' },
  API_KEY_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The API key does not exist' },
  ITEM_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'No item matches' },
  INDEX_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The index does not exist' },
  COLLECTION_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The collection does not exist' },
  EXPIRY_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The collection has no expiry rule' },
  ELEMENT_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'No array element matches' },
  WEBHOOK_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The webhook does not exist' },
  ERASURE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The erasure does not exist' },
  TEAM_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The team does not exist' },
  MOVE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The tenant move does not exist' },
  MEMBER_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'No such member of the team' },
  SCHEMA_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The collection has no schema' },
  FILE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The file does not exist' },
  // 410
  CURSOR_EXPIRED: {
    status: HttpStatus.GONE,
    title: 'The cursor is older than the events kept; resynchronise',
  },
  FILE_LINK_EXPIRED: { status: HttpStatus.GONE, title: 'The file link has expired' },
  // 405
  METHOD_NOT_ALLOWED: {
    status: HttpStatus.METHOD_NOT_ALLOWED,
    title: 'The route does not support this method',
  },
  // 409
  CONFLICT: { status: HttpStatus.CONFLICT, title: 'The request conflicts with existing data' },
  FILE_QUOTA_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: "The upload would take the tenant's files past FILE_QUOTA_BYTES",
  },
  DUPLICATE_USER: {
    status: HttpStatus.CONFLICT,
    title: 'A user with this subject or email exists',
  },
  PROFILE_EXISTS: { status: HttpStatus.CONFLICT, title: 'The profile exists already' },
  DUPLICATE_ITEM: { status: HttpStatus.CONFLICT, title: 'An item with this value exists already' },
  FILE_EXISTS: { status: HttpStatus.CONFLICT, title: 'A file with this id exists already' },
  FILE_ID_TAKEN: {
    status: HttpStatus.CONFLICT,
    title: 'The file id is held by another file of the service',
  },
  /** Data items and sub profiles alike: the request names more than one; nothing was done. */
  AMBIGUOUS_MATCH: { status: HttpStatus.CONFLICT, title: 'More than one resource matches' },
  NOT_AN_ARRAY: { status: HttpStatus.CONFLICT, title: 'The field does not hold an array' },
  WRITE_CONFLICT: {
    status: HttpStatus.CONFLICT,
    title: 'The resource kept changing while the request ran',
  },
  WEBHOOK_QUOTA_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: 'The webhook quota is used up',
  },
  COLLECTION_QUOTA_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: 'The collection quota is used up',
  },
  INDEX_QUOTA_EXCEEDED: { status: HttpStatus.CONFLICT, title: 'The index quota is used up' },
  INDEX_CONFLICT: {
    status: HttpStatus.CONFLICT,
    title: 'The index conflicts with an existing one',
  },
  CLUSTER_CLOSED: {
    status: HttpStatus.CONFLICT,
    title: 'The data cluster takes no new tenants',
  },
  ALREADY_ON_CLUSTER: {
    status: HttpStatus.CONFLICT,
    title: 'The tenant is on this data cluster already',
  },
  MOVE_RUNNING: { status: HttpStatus.CONFLICT, title: 'A move of the tenant is running' },
  ERASURE_RUNNING: { status: HttpStatus.CONFLICT, title: 'An erasure of the tenant is running' },
  IDEMPOTENCY_IN_PROGRESS: {
    status: HttpStatus.CONFLICT,
    title: 'A request with this Idempotency-Key is still running',
  },
  // 412
  PRECONDITION_FAILED: {
    status: HttpStatus.PRECONDITION_FAILED,
    title: 'The If-Match precondition does not hold',
  },
  // 422
  SCHEMA_VIOLATION: {
    status: HttpStatus.UNPROCESSABLE_ENTITY,
    title: "The item does not follow the collection's schema",
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: HttpStatus.UNPROCESSABLE_ENTITY,
    title: 'The Idempotency-Key was used for another request',
  },
  // 424
  FILE_NOT_IMPORTED: {
    status: HttpStatus.FAILED_DEPENDENCY,
    title: 'The line belongs to a file of the import that failed on an earlier line',
  },
  // 413, 415, 416, 429
  PAYLOAD_TOO_LARGE: {
    status: HttpStatus.PAYLOAD_TOO_LARGE,
    title: 'The request body is too large',
  },
  LINE_TOO_LONG: {
    status: HttpStatus.PAYLOAD_TOO_LARGE,
    title: 'A line of the import is longer than IMPORT_MAX_LINE_BYTES',
  },
  TOO_MANY_LINES: {
    status: HttpStatus.PAYLOAD_TOO_LARGE,
    title: 'The import has more lines than IMPORT_MAX_LINES',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    title: 'The request body is not of the media type the route takes',
  },
  UNSUPPORTED_CONTENT_ENCODING: {
    status: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    title: 'The Content-Encoding of the request body is not supported',
  },
  RANGE_NOT_SATISFIABLE: {
    status: HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE,
    title: 'The range lies outside the file',
  },
  RATE_LIMITED: { status: HttpStatus.TOO_MANY_REQUESTS, title: 'Too many requests' },
  TOO_MANY_STREAMS: {
    status: HttpStatus.TOO_MANY_REQUESTS,
    title: 'Too many open event streams and long polls',
  },
  // 5xx
  INTERNAL_ERROR: { status: HttpStatus.INTERNAL_SERVER_ERROR, title: 'Internal server error' },
  DATABASE_UNAVAILABLE: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: 'The database is unavailable or too slow',
  },
  SHUTTING_DOWN: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: 'The instance is shutting down; retry, another instance will answer',
  },
  COLLECTION_MOVING: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: 'The collection is being moved; its writes are paused briefly',
  },
  FEED_MOVING: {
    status: HttpStatus.SERVICE_UNAVAILABLE,
    title: "The tenant's change feed is being moved; its writes are paused briefly",
  },
  // data
  UNIQUE_INDEX_DUPLICATES: {
    status: HttpStatus.CONFLICT,
    title: 'Existing items break the unique index',
  },
} as const satisfies Record<string, { status: HttpStatus; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** URI reference of a problem type (RFC 9457 `type`); documented in README "Errors". */
export function problemType(code: ErrorCode): string {
  return `urn:problem:${code.toLowerCase().replace(/_/g, '-')}`;
}
