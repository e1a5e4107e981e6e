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
import { AttemptClaimsRepository } from './attempt-claims.repository';
import { DeliveriesRepository } from './deliveries.repository';
import { WebhookDeliveries } from './webhook-deliveries';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhookSlotDocument, WebhookSlotSchema } from './webhook-slot.schema';
import { WebhookSlotsRepository } from './webhook-slots.repository';
import { WebhooksService } from './webhooks.service';

/** Webhook endpoints and their deliveries, fed by the change feed. */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: WebhookDocument.name, schema: WebhookSchema },
      { name: DeliveryDocument.name, schema: DeliverySchema },
      { name: AttemptClaimDocument.name, schema: AttemptClaimSchema },
      { name: WebhookSlotDocument.name, schema: WebhookSlotSchema },
    ]),
    EventsModule,
  ],
  controllers: [WebhooksController],
  providers: [
    WebhooksRepository,
    DeliveriesRepository,
    AttemptClaimsRepository,
    WebhookSlotsRepository,
    WebhookDeliveries,
    WebhooksService,
  ],
  exports: [WebhooksService],
})
export class WebhooksModule {}
