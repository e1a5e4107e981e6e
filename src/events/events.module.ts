import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { HealthModule } from '../health/health.module';
import { EventIntentDocument, EventIntentSchema } from './event-intent.schema';
import { EventDocument, EventSchema } from './event.schema';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/**
 * The change feed. Modules that change resources record their writes through EventsService;
 * readers use GET /events and GET /events/stream.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: EventDocument.name, schema: EventSchema },
      { name: EventIntentDocument.name, schema: EventIntentSchema },
    ]),
    HealthModule,
  ],
  controllers: [EventsController],
  providers: [EventsService],
  exports: [EventsService],
})
export class EventsModule {}
