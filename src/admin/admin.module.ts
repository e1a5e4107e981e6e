import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ProfileModule } from '../profile';
import { AdminController } from './admin.controller';
import { AdminService } from './admin.service';
import { TeamRepository } from './team.repository';
import { TeamDocument, TeamSchema } from './team.schema';

/** The operator API. ApiKeyService, which mints the keys, comes from the global AuthModule. */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: TeamDocument.name, schema: TeamSchema }]),
    ProfileModule,
  ],
  controllers: [AdminController],
  providers: [AdminService, TeamRepository],
})
export class AdminModule {}
