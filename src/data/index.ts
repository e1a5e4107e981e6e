// The data module's public face: its module and the services other modules call.
export { DataModule } from './data.module';
export { CollectionsService } from './collections/collections.service';
export { CollectionDropsService } from './collections/collection-drops.service';
export { ItemBatchesService } from './items/item-batches.service';
export { CollectionMover } from './collections/collection-mover';
