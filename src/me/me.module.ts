import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { MeController } from './me.controller';
import { MeService } from './me.service';

/** GET /me: who the key acts as, where, and its quotas. */
@Module({
  imports: [DataModule],
  controllers: [MeController],
  providers: [MeService],
})
export class MeModule {}
