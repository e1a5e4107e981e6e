import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';
import type { LimitMembers } from '../plans';

/** The codes files owns: stored files, their quota and ranges, signed links (file-links.ts). */
export const FILES_ERRORS = defineErrors({
  FILE_LINK_INVALID: {
    status: HttpStatus.FORBIDDEN,
    title: 'The file link is not one the service signed',
  },
  FILE_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The file does not exist' },
  FILE_LINK_EXPIRED: { status: HttpStatus.GONE, title: 'The file link has expired' },
  FILE_QUOTA_EXCEEDED: {
    status: HttpStatus.CONFLICT,
    title: "The upload would take the tenant's files past FILE_QUOTA_BYTES",
  },
  FILE_EXISTS: { status: HttpStatus.CONFLICT, title: 'A file with this id exists already' },
  FILE_ID_TAKEN: {
    status: HttpStatus.CONFLICT,
    title: 'The file id is held by another file of the service',
  },
  RANGE_NOT_SATISFIABLE: {
    status: HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE,
    title: 'The range lies outside the file',
  },
});

export class FileNotFoundError extends DomainError {
  constructor(id: string) {
    super(FILES_ERRORS.FILE_NOT_FOUND, `No file ${id} here.`);
  }
}

/** An import in insert mode names a file the namespace has. */
export class FileExistsError extends DomainError {
  constructor(id: string) {
    super(FILES_ERRORS.FILE_EXISTS, `The file ${id} exists already; mode=upsert replaces it.`);
  }
}

/**
 * A file id names one file of the deployment for good: another namespace's file holds it, or a
 * file stored under it is being uploaded or deleted.
 */
export class FileIdTakenError extends DomainError {
  constructor(id: string) {
    super(
      FILES_ERRORS.FILE_ID_TAKEN,
      `The file id ${id} is held by another file of this namespace (another owner's, or one being uploaded or deleted); a file keeps its id, so it cannot be stored here under it.`,
    );
  }
}

/** The deployment's file byte limit (FILE_QUOTA_BYTES), reached without a plan. */
export class FileQuotaExceededError extends DomainError {
  constructor(members: LimitMembers, neededBytes: number) {
    super(
      FILES_ERRORS.FILE_QUOTA_EXCEEDED,
      `The upload needs ${neededBytes} bytes; the tenant's files use ${members.usage} of ${members.max} (FILE_QUOTA_BYTES). Delete files or ask for a larger quota.`,
      undefined,
      { ...members },
    );
  }
}

export class RangeNotSatisfiableError extends DomainError {
  constructor(readonly size: number) {
    super(
      FILES_ERRORS.RANGE_NOT_SATISFIABLE,
      `The file has ${size} bytes; the range asks for none of them.`,
    );
  }

  override get headers(): Record<string, string> {
    return { 'Content-Range': `bytes */${this.size}` };
  }
}

/** A sweep gave the upload up (it went quiet longer than FILE_UPLOAD_STALE_MS) before it ended. */
export class UploadAbandonedError extends Error {
  constructor() {
    super('the upload was given up by a sweep before it ended');
    this.name = 'UploadAbandonedError';
  }
}
