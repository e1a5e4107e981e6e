import { Module } from '@nestjs/common';
import { DataModule } from '../data/data.module';
import { FilesModule } from '../files';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { MeController } from './me.controller';
import { MeUsageController } from './me-usage.controller';
import { MeService } from './me.service';

/** GET /me: who the key acts as, where, its plan and its limits (TenantLimits is the global PlansModule's); GET /me/usage: what its tenant used. */
@Module({
  imports: [DataModule, FilesModule, WebhooksModule],
  controllers: [MeController, MeUsageController],
  providers: [MeService],
})
export class MeModule {}
