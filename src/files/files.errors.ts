import { DomainError } from '../common/errors';

export class FileNotFoundError extends DomainError {
  constructor(id: string) {
    super('FILE_NOT_FOUND', `No file ${id} here.`);
  }
}

export class FileQuotaExceededError extends DomainError {
  constructor(limitBytes: number, usedBytes: number, neededBytes: number) {
    super(
      'FILE_QUOTA_EXCEEDED',
      `The upload needs ${neededBytes} bytes; the tenant's files use ${usedBytes} of ${limitBytes} (FILE_QUOTA_BYTES). Delete files or ask for a larger quota.`,
    );
  }
}

export class RangeNotSatisfiableError extends DomainError {
  constructor(readonly size: number) {
    super('RANGE_NOT_SATISFIABLE', `The file has ${size} bytes; the range asks for none of them.`);
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
