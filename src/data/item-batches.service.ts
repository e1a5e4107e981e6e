// Kept at its former path for the modules that import it from here; '../data' is the entry.
export { ItemBatchesService } from './items/item-batches.service';
