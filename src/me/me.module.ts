import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { FilesModule } from '../files';
import { MeController } from './me.controller';
import { MeUsageController } from './me-usage.controller';
import { MeService } from './me.service';

/** GET /me: who the key acts as, where, and its quotas; GET /me/usage: what its tenant used. */
@Module({
  imports: [DataModule, FilesModule],
  controllers: [MeController, MeUsageController],
  providers: [MeService],
})
export class MeModule {}
