import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { ProfileModule } from '../profile';
import { TeamModule } from '../team';
import { AdminTeamsController } from './admin-teams.controller';
import { AdminUsersController } from './admin-users.controller';
import { AdminController } from './admin.controller';
import { AdminService } from './admin.service';

/** The operator API. ApiKeyService, which mints the keys, comes from the global AuthModule. */
@Module({
  imports: [ProfileModule, TeamModule, DataModule],
  controllers: [AdminController, AdminTeamsController, AdminUsersController],
  providers: [AdminService],
})
export class AdminModule {}
