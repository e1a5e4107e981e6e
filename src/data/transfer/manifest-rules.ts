import type { CustomerPrincipal } from '../../auth';
import { ForbiddenError } from '../../common/errors';
import type { CollectionsService } from '../collections/collections.service';
import type { SchemaAction } from '../rules/collection-rules';
import type { ExpiryService } from '../rules/expiry/expiry.service';
import type { CollectionSchemas } from '../rules/schema/collection-schemas.service';
import type { ItemSchemas } from '../rules/schema/item-schemas';
import type { ImportCollection } from './import-records';

interface Rules {
  schema?: { text: string; action: SchemaAction };
  expiry?: { field: string; afterSeconds: number };
}

/**
 * The rules a manifest gives its collections (schema, expiry), in an import. They are checked
 * when the manifest is read (a rule the service refuses is the manifest line's 400) and set at
 * the end record, after the items: an export restores its items as they were, including ones
 * stored before their collection's schema that break it. Items are checked against the rules
 * their collection has while they are written. A sub key sets no rules: its manifest may name
 * only the ones its collections have (403 otherwise), as an export by it lists them.
 */
export class ManifestRules {
  private readonly pending = new Map<string, Rules>();

  constructor(
    private readonly deps: {
      collections: CollectionsService;
      schemas: ItemSchemas;
      collectionSchemas: CollectionSchemas;
      expiry: ExpiryService;
    },
    private readonly principal: CustomerPrincipal,
  ) {}

  /** Checks a manifest entry's rules, keeping them for the end record (a dry run keeps none). */
  async take(collection: ImportCollection, dryRun: boolean): Promise<void> {
    const rules: Rules = {};
    if (collection.schema) {
      const text = this.deps.schemas.accept(collection.schema.schema);
      rules.schema = { text, action: collection.schema.action };
    }
    if (collection.expiry) {
      this.deps.expiry.check(collection.expiry);
      rules.expiry = collection.expiry;
    }
    if (!rules.schema && !rules.expiry) return;
    if (this.principal.kind === 'sub') return this.assertHeld(collection.name, rules);
    if (!dryRun) this.pending.set(collection.name, rules);
  }

  /** A sub key's manifest names only the rules the collection has. */
  private async assertHeld(name: string, rules: Rules): Promise<void> {
    const held = (await this.deps.collections.find(this.principal, name))?.rules ?? {};
    const sameSchema =
      !rules.schema ||
      (held.schema?.action === rules.schema.action &&
        JSON.stringify(JSON.parse(held.schema.text)) ===
          JSON.stringify(JSON.parse(rules.schema.text)));
    const sameExpiry =
      !rules.expiry ||
      (held.expiry?.field === rules.expiry.field &&
        held.expiry.afterSeconds === rules.expiry.afterSeconds);
    if (!sameSchema || !sameExpiry)
      throw new ForbiddenError(
        'A sub key sets no collection rules; the manifest names a schema or an expiry the collection does not have.',
      );
  }

  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** Sets the rules kept, once: the end record's work. */
  async apply(): Promise<void> {
    for (const [name, { schema, expiry }] of this.pending) {
      if (schema)
        await this.deps.collectionSchemas.putAccepted(
          this.principal,
          name,
          schema.text,
          schema.action,
        );
      if (expiry) await this.deps.expiry.set(this.principal, name, expiry);
    }
    this.pending.clear();
  }
}
