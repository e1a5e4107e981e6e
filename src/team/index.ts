/** What other modules may use of teams. */
export { TeamModule } from './team.module';
export { TeamService, type MyTeam, type TeamWithMembers } from './team.service';
export type { Team } from './team.repository';
export { MyTeamDto, PutTeamMemberDto, TeamDetailDto, TeamMemberDto } from './dto/team.dto';
