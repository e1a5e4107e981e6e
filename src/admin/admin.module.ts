import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { IdentityModule } from '../identity';
import { LifecycleModule } from '../lifecycle';
import { ProfileModule } from '../profile';
import { TeamModule } from '../team';
import { AdminClustersController } from './admin-clusters.controller';
import { AdminErasuresController } from './admin-erasures.controller';
import { AdminPlansController } from './admin-plans.controller';
import { AdminTeamsController } from './admin-teams.controller';
import { AdminUsageController } from './admin-usage.controller';
import { AdminUsersController } from './admin-users.controller';
import { AdminService } from './admin.service';

/**
 * The operator API: every /admin route, one controller per resource. ApiKeyService, which mints
 * the keys, comes from the global AuthModule; the erasures are the lifecycle module's; the plan
 * catalogue and the limits it sets come from the global PlansModule.
 */
@Module({
  imports: [ProfileModule, TeamModule, DataModule, LifecycleModule, IdentityModule],
  controllers: [
    AdminUsersController,
    AdminTeamsController,
    AdminPlansController,
    AdminErasuresController,
    AdminClustersController,
    AdminUsageController,
  ],
  providers: [AdminService],
})
export class AdminModule {}
