import { ForbiddenError } from '../../common/errors';
import type { CustomerPrincipal } from '../../auth';
import { checkCollectionAccess } from '../../auth';
import type { CollectionsService } from '../collections/collections.service';
import type { IndexesService } from '../indexes/indexes.service';
import type { ImportDryRun } from './import-dry-run';
import type { ImportCollection } from './import-records';
import type { ManifestRules } from './manifest-rules';

/**
 * The collections a manifest names, made when it is read: each with its indexes (a root or team
 * key's; a sub key's manifest may name only indexes that exist), its rules kept for the end
 * record (ManifestRules). A dry run only counts the ones it would make against the quota.
 */
export class ManifestCollections {
  constructor(
    private readonly collections: CollectionsService,
    private readonly indexes: IndexesService,
    /** The manifest's rules, kept for the end record. */
    readonly rules: ManifestRules,
    private readonly principal: CustomerPrincipal,
    /** A dry run's counts: set when the import writes nothing. */
    private readonly dry: ImportDryRun | null,
  ) {}

  async create(collection: ImportCollection): Promise<void> {
    // A manifest naming a collection the key may not write is refused before anything is read.
    checkCollectionAccess(this.principal, collection.name, 'write');
    await this.rules.take(collection, this.dry !== null);
    if (this.dry) {
      if (!(await this.collections.find(this.principal, collection.name)))
        await this.dry.collection(collection.name);
      return;
    }
    await this.collections.findOrCreate(this.principal, collection.name);
    // Indexes are root and team keys' to make (as on /data/{c}/index): a sub key's import
    // accepts a manifest whose indexes exist already, as an export by the sub key names them.
    if (this.principal.kind === 'sub') {
      const present = new Set(
        (await this.indexes.list(this.principal, collection.name)).map((i) => i.name),
      );
      const missing = collection.indexes.filter((index) => !present.has(index.name));
      if (missing.length > 0)
        throw new ForbiddenError(
          `A sub key creates no indexes; missing: ${missing.map((i) => i.name).join(', ')}.`,
        );
      return;
    }
    // Each one write unit through the collection's move gate, as on /data/{c}/index.
    for (const index of collection.indexes)
      await this.indexes.create(this.principal, collection.name, index);
  }
}
