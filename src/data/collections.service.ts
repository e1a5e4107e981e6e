// Kept at its former path for the modules that import it from here; '../data' is the entry.
export { CollectionsService } from './collections/collections.service';
