import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { APP_CONFIG, type AppConfig } from '../config';
import { HealthModule } from '../health/health.module';
import { EventAppender } from './event-appender';
import { EventHub } from './event-hub';
import { EventIntentLog } from './event-intent-log';
import { EventIntentDocument, EventIntentSchema } from './event-intent.schema';
import { EventIntentsRepository } from './event-intents.repository';
import { EventSweep } from './event-sweep';
import { EventTails } from './event-tails';
import { EventDocument, EventSchema } from './event.schema';
import { EventsController } from './events.controller';
import { FeedCollections } from './feed-collections';
import { FeedMover } from './feed-mover';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';
import { StreamSlotDocument, StreamSlotSchema } from './stream-slot.schema';
import { StreamSlots } from './stream-slots';
import { StreamSlotsRepository } from './stream-slots.repository';

/**
 * The change feed. Modules that change resources record their writes through EventsService;
 * readers use GET /events and GET /events/stream.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: EventDocument.name, schema: EventSchema },
      { name: EventIntentDocument.name, schema: EventIntentSchema },
      { name: StreamSlotDocument.name, schema: StreamSlotSchema },
    ]),
    HealthModule,
  ],
  controllers: [EventsController],
  providers: [
    FeedCollections,
    FeedMover,
    EventsRepository,
    EventIntentsRepository,
    EventIntentLog,
    EventHub,
    EventAppender,
    EventTails,
    EventSweep,
    StreamSlotsRepository,
    {
      provide: StreamSlots,
      useFactory: (store: StreamSlotsRepository, config: AppConfig) =>
        new StreamSlots(store, {
          total: config.events.maxStreams,
          leaseMs: config.events.streamLeaseMs,
        }),
      inject: [StreamSlotsRepository, APP_CONFIG],
    },
    EventsService,
  ],
  // Tenant moves take a tenant's feed along.
  exports: [EventsService, FeedMover],
})
export class EventsModule {}
