import type { CustomerPrincipal } from '../../auth';
import { ForbiddenError } from '../../common/errors';
import type { CollectionsService } from '../collections/collections.service';
import type { SchemaAction } from '../rules/collection-rules';
import type { CollectionSchemas } from '../rules/schema/collection-schemas.service';
import type { ItemSchemas } from '../rules/schema/item-schemas';
import type { ImportCollection } from './import-records';

/**
 * The rules a manifest gives its collections (their schemas), in an import. They are checked
 * when the manifest is read (a schema the service refuses is the manifest line's 400) and set
 * at the end record, after the items: an export restores its items as they were, including ones
 * stored before their collection's schema that break it. Items are checked against the rules
 * their collection has while they are written. A sub key sets no rules: its manifest may name
 * only the ones its collections have (403 otherwise), as an export by it lists them.
 */
export class ManifestRules {
  private readonly pending = new Map<string, { text: string; action: SchemaAction }>();

  constructor(
    private readonly deps: {
      collections: CollectionsService;
      schemas: ItemSchemas;
      collectionSchemas: CollectionSchemas;
    },
    private readonly principal: CustomerPrincipal,
  ) {}

  /** Checks a manifest entry's rules, keeping them for the end record (a dry run keeps none). */
  async take(collection: ImportCollection, dryRun: boolean): Promise<void> {
    if (!collection.schema) return;
    const text = this.deps.schemas.accept(collection.schema.schema);
    const { action } = collection.schema;
    if (this.principal.kind === 'sub') {
      const current = (await this.deps.collections.find(this.principal, collection.name))?.rules
        .schema;
      const same =
        current?.action === action &&
        JSON.stringify(JSON.parse(current.text)) === JSON.stringify(JSON.parse(text));
      if (!same)
        throw new ForbiddenError(
          'A sub key sets no collection schema; the manifest names one the collection does not have.',
        );
      return;
    }
    if (!dryRun) this.pending.set(collection.name, { text, action });
  }

  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** Sets the rules kept, once: the end record's work. */
  async apply(): Promise<void> {
    for (const [name, { text, action }] of this.pending)
      await this.deps.collectionSchemas.put(this.principal, name, JSON.parse(text), action);
    this.pending.clear();
  }
}
