import type { CustomerPrincipal } from '../../auth';
import { ForbiddenError } from '../../common/errors';
import type { CollectionsService } from '../collections/collections.service';
import type { SchemaAction } from '../rules/collection-rules';
import type { ExpiryService } from '../rules/expiry/expiry.service';
import type { CollectionSchemas } from '../rules/schema/collection-schemas.service';
import type { ItemSchemas } from '../rules/schema/item-schemas';
import type { ImportCollection } from './import-records';
import { DEFAULT_ACCESS_RULES, type AccessRulesDocument } from '../access/access-rules';
import type { AccessRulesService } from '../access/access.service';
import { NO_PRECONDITION } from '../../common/http/etag';

interface Rules {
  schema?: { text: string; action: SchemaAction };
  expiry?: { field: string; afterSeconds: number };
  access?: AccessRulesDocument;
}

/**
 * The rules a manifest gives its collections (schema, expiry, access rules), in an import. They are checked
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
      access: AccessRulesService;
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
    if (collection.access !== undefined) rules.access = this.deps.access.accept(collection.access);
    if (!rules.schema && !rules.expiry && !rules.access) return;
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
    // Access rules the collection has, or the defaults when it has none (or is made by the import).
    const heldAccess = held.access
      ? JSON.stringify(JSON.parse(held.access.text))
      : JSON.stringify(DEFAULT_ACCESS_RULES);
    const sameAccess = !rules.access || JSON.stringify(rules.access) === heldAccess;
    if (!sameSchema || !sameExpiry || !sameAccess)
      throw new ForbiddenError(
        'A sub key sets no collection rules; the manifest names a schema, an expiry or access rules the collection does not have.',
      );
  }

  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** Sets the rules kept, once: the end record's work. */
  async apply(): Promise<void> {
    for (const [name, { schema, expiry, access }] of this.pending) {
      if (schema)
        await this.deps.collectionSchemas.putAccepted(
          this.principal,
          name,
          schema.text,
          schema.action,
        );
      if (expiry) await this.deps.expiry.set(this.principal, name, expiry);
      if (access) await this.deps.access.put(this.principal, name, access, NO_PRECONDITION);
    }
    this.pending.clear();
  }
}
