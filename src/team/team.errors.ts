import { HttpStatus } from '@nestjs/common';
import { defineErrors, DomainError } from '../common/errors';

/** The codes team owns. */
export const TEAM_ERRORS = defineErrors({
  TEAM_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'The team does not exist' },
  MEMBER_NOT_FOUND: { status: HttpStatus.NOT_FOUND, title: 'No such member of the team' },
});

export class TeamNotFoundError extends DomainError {
  constructor(id: string) {
    super(TEAM_ERRORS.TEAM_NOT_FOUND, `No team with id ${id}.`);
  }
}

export class MemberNotFoundError extends DomainError {
  constructor(teamId: string, subject: string) {
    super(TEAM_ERRORS.MEMBER_NOT_FOUND, `${subject} is not a member of team ${teamId}.`);
  }
}
