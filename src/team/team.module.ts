import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ProfileModule } from '../profile';
import { TeamMembershipDocument, TeamMembershipSchema } from './team-membership.schema';
import { TeamMembershipRepository } from './team-membership.repository';
import { TeamController } from './team.controller';
import { TeamRepository } from './team.repository';
import { TeamDocument, TeamSchema } from './team.schema';
import { TeamKeysService } from './team-keys.service';
import { TeamService } from './team.service';

/** Teams and their members; ApiKeyService (team keys) comes from the global AuthModule. */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: TeamDocument.name, schema: TeamSchema },
      { name: TeamMembershipDocument.name, schema: TeamMembershipSchema },
    ]),
    ProfileModule,
  ],
  controllers: [TeamController],
  providers: [TeamRepository, TeamMembershipRepository, TeamService, TeamKeysService],
  exports: [TeamService],
})
export class TeamModule {}
