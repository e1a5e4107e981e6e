/** What other modules may use of teams. */
export { TeamModule } from './team.module';
export { TeamService } from './team.service';
export { TeamRepository, type Team } from './team.repository';
export { TeamMembershipRepository } from './team-membership.repository';
export { MyTeamDto, PutTeamMemberDto, TeamDetailDto, TeamMemberDto } from './dto/team.dto';
