import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { EventsModule } from '../events';
import {
  AttemptClaimDocument,
  AttemptClaimSchema,
  DeliveryDocument,
  DeliverySchema,
  WebhookDocument,
  WebhookSchema,
} from './webhook.schema';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Webhook endpoints and their deliveries, fed by the change feed. */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: WebhookDocument.name, schema: WebhookSchema },
      { name: DeliveryDocument.name, schema: DeliverySchema },
      { name: AttemptClaimDocument.name, schema: AttemptClaimSchema },
    ]),
    EventsModule,
  ],
  controllers: [WebhooksController],
  providers: [WebhooksService],
  exports: [WebhooksService],
})
export class WebhooksModule {}
