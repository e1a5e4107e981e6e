import { ForbiddenError } from '../../common/errors';
import type { CustomerPrincipal } from '../../auth';
import type { ImportDeps, ImportOptions } from './import-context';
import type { ImportDryRun } from './import-dry-run';
import type { ImportCollection } from './import-records';
import { ManifestRules } from './manifest-rules';

/**
 * The collections a manifest names, made when it is read: each with its indexes (a root or team
 * key's; a sub key's manifest may name only indexes that exist), its rules kept for the end
 * record (ManifestRules). A dry run only counts the ones it would make against the quota.
 */
export class ManifestCollections {
  readonly rules: ManifestRules;

  constructor(
    private readonly deps: ImportDeps,
    private readonly principal: CustomerPrincipal,
    private readonly options: ImportOptions,
    private readonly dry: ImportDryRun,
  ) {
    this.rules = new ManifestRules(deps, principal);
  }

  async create(collection: ImportCollection): Promise<void> {
    const { collections, indexes, gate } = this.deps;
    await this.rules.take(collection, this.options.dryRun);
    if (this.options.dryRun) {
      if (!(await collections.find(this.principal, collection.name)))
        await this.dry.collection(collection.name);
      return;
    }
    await collections.findOrCreate(this.principal, collection.name);
    // Indexes are root and team keys' to make (as on /data/{c}/index): a sub key's import
    // accepts a manifest whose indexes exist already, as an export by the sub key names them.
    if (this.principal.kind === 'sub') {
      const present = new Set(
        (await indexes.list(this.principal, collection.name)).map((i) => i.name),
      );
      const missing = collection.indexes.filter((index) => !present.has(index.name));
      if (missing.length > 0)
        throw new ForbiddenError(
          `A sub key creates no indexes; missing: ${missing.map((i) => i.name).join(', ')}.`,
        );
      return;
    }
    for (const index of collection.indexes)
      await gate.around(this.principal, collection.name, () =>
        indexes.create(this.principal, collection.name, index),
      );
  }
}
