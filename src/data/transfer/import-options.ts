import type { CollectionSettings } from './import-records';

/** How an import writes. */
export interface ImportOptions {
  /** `insert`: an `_id` that exists is a 409; `upsert`: it is replaced. */
  mode: 'insert' | 'upsert';
  /** Nothing is written; each line reports what would happen. */
  dryRun: boolean;
  /** `authField` and `uniqueField` of the query: for collections the manifest gives none. */
  settings: CollectionSettings;
}
