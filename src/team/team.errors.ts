import { DomainError } from '../common/errors';

export class TeamNotFoundError extends DomainError {
  constructor(id: string) {
    super('TEAM_NOT_FOUND', `No team with id ${id}.`);
  }
}

export class MemberNotFoundError extends DomainError {
  constructor(teamId: string, subject: string) {
    super('MEMBER_NOT_FOUND', `${subject} is not a member of team ${teamId}.`);
  }
}
