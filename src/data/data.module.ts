import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { EventsModule } from '../events';
import { CollectionDropDocument, CollectionDropSchema } from './collection-drop.schema';
import { CollectionDropsService } from './collection-drops.service';
import { CollectionRegistryDocument, CollectionRegistrySchema } from './collection-registry.schema';
import { CollectionRegistryRepository } from './collection-registry.repository';
import { DataAnalysisController } from './data-analysis.controller';
import { DataArraysController } from './data-arrays.controller';
import { DataBatchController } from './data-batch.controller';
import { DataIndexController } from './data-index.controller';
import { DataItemRepository } from './data-item.repository';
import { DataController } from './data.controller';
import { CollectionsService } from './collections.service';
import { IndexesService } from './indexes.service';
import { ItemEvents } from './item-events';
import { ItemAnalysisService } from './item-analysis.service';
import { ItemBatchesService } from './item-batches.service';
import { ItemsService } from './items.service';
import { IndexSlotDocument, IndexSlotSchema } from './index-slot.schema';
import { IndexSlotRepository } from './index-slot.repository';
import { UniqueClaimDocument, UniqueClaimSchema } from './unique-claim.schema';
import { UniqueClaimRepository } from './unique-claim.repository';
import { UniqueValuesService } from './unique-values.service';

@Module({
  imports: [
    // Item and collection changes go to the change feed.
    EventsModule,
    MongooseModule.forFeature([
      { name: CollectionRegistryDocument.name, schema: CollectionRegistrySchema },
      { name: CollectionDropDocument.name, schema: CollectionDropSchema },
      { name: IndexSlotDocument.name, schema: IndexSlotSchema },
      { name: UniqueClaimDocument.name, schema: UniqueClaimSchema },
    ]),
  ],
  // The index controller first: its fixed `index` segment must not be read as an item route.
  controllers: [
    DataIndexController,
    DataAnalysisController,
    DataBatchController,
    DataArraysController,
    DataController,
  ],
  providers: [
    CollectionRegistryRepository,
    DataItemRepository,
    IndexSlotRepository,
    UniqueClaimRepository,
    CollectionsService,
    CollectionDropsService,
    UniqueValuesService,
    ItemEvents,
    ItemsService,
    ItemAnalysisService,
    ItemBatchesService,
    IndexesService,
  ],
  // GET /me reports the collection quota; erasures drop collections and purge owned items.
  exports: [CollectionsService, CollectionDropsService, ItemBatchesService],
})
export class DataModule {}
