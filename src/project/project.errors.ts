import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';

/** The codes project owns. */
export const PROJECT_ERRORS = defineErrors({
  PROJECT_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The project does not exist' },
});

/**
 * No such project of the caller in the request branch. The same answer for another owner's,
 * another branch's and a malformed id: existence is not revealed.
 */
export class ProjectNotFoundError extends DomainError {
  constructor(id: string) {
    super(PROJECT_ERRORS.PROJECT_NOT_FOUND, `No project ${id} in this branch.`);
  }
}
