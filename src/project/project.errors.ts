import { DomainError } from '../common/errors';

/**
 * No such project of the caller in the request branch. The same answer for another owner's,
 * another branch's and a malformed id: existence is not revealed.
 */
export class ProjectNotFoundError extends DomainError {
  constructor(id: string) {
    super('PROJECT_NOT_FOUND', `No project ${id} in this branch.`);
  }
}
