import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { DataModule } from '../data/data.module';
import { EventsModule } from '../events';
import { ProfileModule } from '../profile';
import { ProjectModule } from '../project/project.module';
import { TeamModule } from '../team/team.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { AccountErasureController, ErasureController } from './erasure.controller';
import { ErasureDocument, ErasureSchema } from './erasure.schema';
import { ErasureService } from './erasure.service';

/**
 * The end of accounts and teams: erasures that reach into every module holding their data.
 * ApiKeyService comes from the global AuthModule.
 */
@Module({
  imports: [
    MongooseModule.forFeature([{ name: ErasureDocument.name, schema: ErasureSchema }]),
    DataModule,
    EventsModule,
    ProfileModule,
    ProjectModule,
    TeamModule,
    WebhooksModule,
  ],
  controllers: [ErasureController, AccountErasureController],
  providers: [ErasureService],
})
export class LifecycleModule {}
