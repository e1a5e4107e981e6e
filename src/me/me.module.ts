import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { FilesModule } from '../files';
import { MeController } from './me.controller';
import { MeService } from './me.service';

/** GET /me: who the key acts as, where, and its quotas. */
@Module({
  imports: [DataModule, FilesModule],
  controllers: [MeController],
  providers: [MeService],
})
export class MeModule {}
