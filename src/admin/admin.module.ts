import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AuthModule } from '../auth/auth.module';
import { ProfileModule } from '../profile/profile.module';
import { AdminController } from './admin.controller';
import { AdminService } from './admin.service';
import { TeamRepository } from './team.repository';
import { TeamDocument, TeamSchema } from './team.schema';

@Module({
  imports: [
    MongooseModule.forFeature([{ name: TeamDocument.name, schema: TeamSchema }]),
    AuthModule,
    ProfileModule,
  ],
  controllers: [AdminController],
  providers: [AdminService, TeamRepository],
})
export class AdminModule {}
