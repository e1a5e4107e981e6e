// Kept at its former path for the modules that import it from here; '../data' is the entry.
export { CollectionDropsService } from './collections/collection-drops.service';
