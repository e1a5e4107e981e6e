import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { CollectionRegistryDocument, CollectionRegistrySchema } from './collection-registry.schema';
import { CollectionRegistryRepository } from './collection-registry.repository';
import { DataIndexController } from './data-index.controller';
import { DataItemRepository } from './data-item.repository';
import { DataController } from './data.controller';
import { CollectionsService } from './collections.service';
import { IndexesService } from './indexes.service';
import { ItemsService } from './items.service';
import { IndexSlotDocument, IndexSlotSchema } from './index-slot.schema';
import { IndexSlotRepository } from './index-slot.repository';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: CollectionRegistryDocument.name, schema: CollectionRegistrySchema },
      { name: IndexSlotDocument.name, schema: IndexSlotSchema },
    ]),
  ],
  // The index controller first: its fixed `index` segment must not be read as an item route.
  controllers: [DataIndexController, DataController],
  providers: [
    CollectionRegistryRepository,
    DataItemRepository,
    IndexSlotRepository,
    CollectionsService,
    ItemsService,
    IndexesService,
  ],
})
export class DataModule {}
