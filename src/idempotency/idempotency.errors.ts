import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';

/** The codes of Idempotency-Key. */
export const IDEMPOTENCY_ERRORS = defineErrors({
  INVALID_IDEMPOTENCY_KEY: {
    status: HttpStatus.BAD_REQUEST,
    title: 'The Idempotency-Key header is not valid',
  },
  IDEMPOTENCY_IN_PROGRESS: {
    status: HttpStatus.CONFLICT,
    title: 'A request with this Idempotency-Key is still running',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: HttpStatus.UNPROCESSABLE_ENTITY,
    title: 'The Idempotency-Key was used for another request',
  },
});

/** The Idempotency-Key header is malformed; nothing was run or stored. */
export class InvalidIdempotencyKeyError extends DomainError {
  constructor(detail: string) {
    super(IDEMPOTENCY_ERRORS.INVALID_IDEMPOTENCY_KEY, detail, [
      { field: 'Idempotency-Key', message: 'not a valid key' },
    ]);
  }
}

/** The key was first used for another request (method, path, query, If-Match or body differ). */
export class IdempotencyKeyReusedError extends DomainError {
  constructor() {
    super(
      IDEMPOTENCY_ERRORS.IDEMPOTENCY_KEY_REUSED,
      'This Idempotency-Key was used for a different request (method, path, query, If-Match or body differ); nothing was done. Use a new key for a new request.',
    );
  }
}

/** The first request with the key is still running; nothing was done. */
export class IdempotencyInProgressError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      IDEMPOTENCY_ERRORS.IDEMPOTENCY_IN_PROGRESS,
      'A request with this Idempotency-Key is still running; nothing was done. Retry after the time in Retry-After to receive its response.',
    );
  }

  override get headers(): Record<string, string> {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}
