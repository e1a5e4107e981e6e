import { COMMON_ERRORS } from './common.errors';
import { DomainError } from './domain-error';

/**
 * A write's If-Match does not hold: the resource is at another revision than the client read,
 * or it does not exist. The problem carries the current ETag, when there is one, so the client
 * can tell what it is out of date with.
 */
export class PreconditionFailedError extends DomainError {
  constructor(readonly currentETag: string | null) {
    super(
      COMMON_ERRORS.PRECONDITION_FAILED,
      currentETag === null
        ? 'If-Match names a representation, but the resource does not exist; nothing was changed.'
        : `The resource is at ETag ${currentETag}, which If-Match does not name; nothing was changed. Read it again and retry.`,
    );
  }

  override get headers(): Record<string, string> {
    return this.currentETag === null ? {} : { ETag: this.currentETag };
  }
}
