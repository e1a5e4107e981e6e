import type { Logger } from '@nestjs/common';
import type { CollectionsService } from '../collections/collections.service';
import type { CollectionWriteGate } from '../collections/collection-write.gate';
import type { IndexesService } from '../indexes/indexes.service';
import type { ItemsRepository } from '../items/items.repository';
import type { ItemsService } from '../items/items.service';
import type { FileRestores, FilesService } from '../../files';
import { type JsonBudget } from '../../common/json';
import type { ExpiryService } from '../rules/expiry/expiry.service';
import type { CollectionSchemas } from '../rules/schema/collection-schemas.service';
import type { ItemSchemas } from '../rules/schema/item-schemas';
import type { SchemaEnforcement } from '../rules/schema/schema-enforcement';
import type { CollectionSettings } from './import-records';
import type { ImportBatches } from './import-batches';
import type { ItemReplacements } from './item-replacements';

/** How an import writes (its options) and with what (its dependencies). */

export interface ImportOptions {
  /** `insert`: an `_id` that exists is a 409; `upsert`: it is replaced. */
  mode: 'insert' | 'upsert';
  /** Nothing is written; each line reports what would happen. */
  dryRun: boolean;
  /** `authField` and `uniqueField` of the query: for collections the manifest gives none. */
  settings: CollectionSettings;
}

/** What an import writes with. */
export interface ImportDeps {
  collections: CollectionsService;
  creates: ItemsService;
  /** Runs of item lines of one collection, written together. */
  batches: ImportBatches;
  replacements: ItemReplacements;
  items: ItemsRepository;
  indexes: IndexesService;
  gate: CollectionWriteGate;
  schema: SchemaEnforcement;
  schemas: ItemSchemas;
  collectionSchemas: CollectionSchemas;
  expiry: ExpiryService;
  budget: JsonBudget;
  logger: Logger;
  /** Files: stored under their kept ids (FileRestores), up to FILE_MAX_BYTES each. */
  restores: FileRestores;
  files: FilesService;
  fileMaxBytes: number;
}
