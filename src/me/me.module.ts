import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { MeController } from './me.controller';

/** GET /me: who the key acts as, where, and its quotas. */
@Module({
  imports: [DataModule],
  controllers: [MeController],
})
export class MeModule {}
