import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { EventsModule } from '../events';
import { FilesModule } from '../files';
import { HealthModule } from '../health/health.module';
import { CollectionDropDocument, CollectionDropSchema } from './collections/collection-drop.schema';
import { CollectionDropsRepository } from './collections/collection-drops.repository';
import { CollectionDropsService } from './collections/collection-drops.service';
import { CollectionGrantGuard } from './collections/collection-grant';
import {
  CollectionRegistryDocument,
  CollectionRegistrySchema,
} from './collections/collection-registry.schema';
import { CollectionRegistryRepository } from './collections/collection-registry.repository';
import { ItemsRepository } from './items/items.repository';
import { AnalysisRepository } from './analysis/analysis.repository';
import { CollectionsService } from './collections/collections.service';
import { IndexesService } from './indexes/indexes.service';
import { ItemEvents } from './items/item-events';
import { FeedAccess } from './access/feed-access';
import { ItemAnalysisService } from './analysis/item-analysis.service';
import { ItemBatchesService } from './items/item-batches.service';
import { DATA_CONTROLLERS } from './data.controllers';
import { ItemWritesService } from './items/item-writes.service';
import { ItemsService } from './items/items.service';
import { ItemExpansions } from './expand/item-expansions.service';
import { IndexSlotDocument, IndexSlotSchema } from './indexes/index-slot.schema';
import { IndexSlotRepository } from './indexes/index-slot.repository';
import { IndexQuota } from './indexes/index-quota';
import { UniqueClaimDocument, UniqueClaimSchema } from './items/unique/unique-claim.schema';
import { UniqueClaimRepository } from './items/unique/unique-claim.repository';
import { TenantStorage } from './storage/tenant-storage';
import { UniqueValuesService } from './items/unique/unique-values.service';
import { ItemPlaceRepository } from './items/limits/item-place.repository';
import { ItemLimits } from './items/limits/item-limits.service';

import { CollectionMover } from './collections/collection-mover';
import { FallbackWriteQueue } from '../common/mongo/fallback-database';
import { ItemReplacements } from './transfer/item-replacements';
import { NamespaceExport } from './transfer/namespace-export';
import { FileExport } from './transfer/file-export';
import { TransferItemsRepository } from './transfer/transfer-items.repository';
import { NamespaceImport } from './transfer/namespace-import';
import { ImportBatches } from './transfer/import-batches';
import { TransferController } from './transfer/transfer.controller';
import { CollectionWriteGate } from './collections/collection-write.gate';
import { ItemSchemas } from './rules/schema/item-schemas';
import { SchemaEnforcement } from './rules/schema/schema-enforcement';
import { CollectionSchemas } from './rules/schema/collection-schemas.service';
import { CheckedUpdates } from './rules/schema/checked-updates';
import { ExpiredItemsRepository } from './rules/expiry/expired-items.repository';
import { ExpiringCollectionsRepository } from './rules/expiry/expiring-collections.repository';
import { ExpiryService } from './rules/expiry/expiry.service';
import { AccessRulesService } from './access/access.service';
import { ExpirySweep } from './rules/expiry/expiry-sweep';
import { ItemExpiry } from './rules/expiry/item-expiry';
import { SearchRunDocument, SearchRunSchema } from './search/search-build.schema';
import { SearchBuildRepository } from './search/search-build.repository';
import { SearchBuildRunner } from './search/search-build.runner';
import { SearchService } from './search/search.service';

@Module({
  imports: [
    // Item and collection changes go to the change feed.
    EventsModule,
    // Exports and imports end when the instance drains.
    HealthModule,
    // Exports and imports carry the namespace's files.
    FilesModule,
    MongooseModule.forFeature([
      { name: CollectionRegistryDocument.name, schema: CollectionRegistrySchema },
      { name: CollectionDropDocument.name, schema: CollectionDropSchema },
      { name: IndexSlotDocument.name, schema: IndexSlotSchema },
      { name: UniqueClaimDocument.name, schema: UniqueClaimSchema },
      { name: SearchRunDocument.name, schema: SearchRunSchema },
    ]),
  ],
  controllers: [...DATA_CONTROLLERS, TransferController],
  providers: [
    CollectionGrantGuard,
    TenantStorage,
    CollectionDropsRepository,
    CollectionRegistryRepository,
    ItemsRepository,
    AnalysisRepository,
    IndexSlotRepository,
    IndexQuota,
    UniqueClaimRepository,
    CollectionsService,
    CollectionDropsService,
    CollectionWriteGate,
    CollectionMover,
    UniqueValuesService,
    ItemPlaceRepository,
    ItemLimits,
    ItemEvents,
    FeedAccess,
    ItemsService,
    ItemExpansions,
    ItemWritesService,
    ItemAnalysisService,
    ItemBatchesService,
    IndexesService,
    NamespaceExport,
    FileExport,
    NamespaceImport,
    ImportBatches,
    ItemReplacements,
    TransferItemsRepository,
    ItemSchemas,
    SchemaEnforcement,
    CollectionSchemas,
    CheckedUpdates,
    ExpiredItemsRepository,
    ExpiringCollectionsRepository,
    ItemExpiry,
    ExpiryService,
    AccessRulesService,
    ExpirySweep,
    SearchBuildRepository,
    SearchBuildRunner,
    SearchService,
    // One queue for the writes of an item, whichever service makes them (FallbackWriteQueue).
    { provide: FallbackWriteQueue, useFactory: () => new FallbackWriteQueue() },
  ],
  // GET /me reports the collection quota; erasures drop collections and purge owned items;
  // tenant moves move collections; account exports hold every branch's items.
  exports: [
    // Registered globally by AppModule, in the order of the guards.
    CollectionGrantGuard,
    CollectionsService,
    CollectionDropsService,
    ItemBatchesService,
    CollectionMover,
    NamespaceExport,
  ],
})
export class DataModule {}
