import type { CustomerPrincipal } from '../../auth';
import { ForbiddenError, ValidationFailedError } from '../../common/errors';
import type { CollectionsService } from '../collections/collections.service';
import type { SchemaAction } from '../rules/collection-rules';
import type { ExpiryService } from '../rules/expiry/expiry.service';
import type { CollectionSchemas } from '../rules/schema/collection-schemas.service';
import type { ItemSchemas } from '../rules/schema/item-schemas';
import type { ImportCollection } from './import-records';
import {
  DEFAULT_ACCESS_RULES,
  everyProtectedPath,
  type AccessRulesDocument,
} from '../access/access-rules';
import type { AccessRulesService } from '../access/access.service';
import { NO_PRECONDITION } from '../../common/http/etag';
import { ProtectedFieldError } from '../data.errors';
import { protectedSearchField, readSearchConfig, type SearchConfig } from '../search/search-config';
import type { SearchService } from '../search/search.service';

interface Rules {
  schema?: { text: string; action: SchemaAction };
  expiry?: { field: string; afterSeconds: number };
  access?: AccessRulesDocument;
  search?: SearchConfig;
}

/**
 * The rules a manifest gives its collections (schema, expiry, access rules, search
 * configuration), in an import. They are checked when the manifest is read (a rule the service
 * refuses is the manifest line's 400) and set at the end record, after the items: an export
 * restores its items as they were, including ones stored before their collection's schema that
 * break it. Items are checked against the rules their collection has while they are written. A
 * search configuration is set last, as PUT /data/{c}/search sets it (its index slot, the access
 * rules set before it), and its build writes the words of the items imported; one equal to the
 * collection's is left as it is. A sub key sets no rules: its manifest may name only the ones
 * its collections have (403 otherwise), as an export by it lists them.
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
      search: SearchService;
      /** SEARCH_MAX_FIELDS. */
      searchMaxFields: number;
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
    if (collection.search !== undefined) rules.search = this.acceptSearch(collection.search);
    if (!rules.schema && !rules.expiry && !rules.access && !rules.search) return;
    if (rules.search && this.principal.kind !== 'sub')
      await this.assertUnprotected(collection.name, rules.search, rules.access);
    if (this.principal.kind === 'sub') return this.assertHeld(collection.name, rules);
    if (!dryRun) this.pending.set(collection.name, rules);
  }

  /** A manifest's search configuration, as PUT /data/{c}/search reads it; its errors name `search.`. */
  private acceptSearch(body: Record<string, unknown>): SearchConfig {
    try {
      return readSearchConfig(body, this.deps.searchMaxFields);
    } catch (error) {
      if (!(error instanceof ValidationFailedError)) throw error;
      throw new ValidationFailedError(
        (error.errors ?? []).map((e) => ({ ...e, field: `search.${e.field}` })),
      );
    }
  }

  /**
   * 400 PROTECTED_FIELD when a search field is protected by the access rules the collection will
   * have: the manifest's, else the ones it has (PUT /data/{c}/search checks them again at the end).
   */
  private async assertUnprotected(
    name: string,
    search: SearchConfig,
    access: AccessRulesDocument | undefined,
  ): Promise<void> {
    const hidden = everyProtectedPath(
      access ?? (await this.deps.collections.find(this.principal, name))?.rules.access?.text,
    );
    const reached = protectedSearchField(search.fields, hidden);
    if (reached) throw new ProtectedFieldError('search.fields', reached.field);
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
    const sameSearch = !rules.search || sameSearchConfig(held.search, rules.search);
    if (!sameSchema || !sameExpiry || !sameAccess || !sameSearch)
      throw new ForbiddenError(
        'A sub key sets no collection rules; the manifest names a schema, an expiry, access rules or a search configuration the collection does not have.',
      );
  }

  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** Sets the rules kept, once: the end record's work. */
  async apply(): Promise<void> {
    for (const [name, { schema, expiry, access, search }] of this.pending) {
      if (schema)
        await this.deps.collectionSchemas.putAccepted(
          this.principal,
          name,
          schema.text,
          schema.action,
        );
      if (expiry) await this.deps.expiry.set(this.principal, name, expiry);
      if (access) await this.deps.access.put(this.principal, name, access, NO_PRECONDITION);
      if (search) await this.applySearch(name, search);
    }
    this.pending.clear();
  }

  /** Sets a search configuration the collection does not have already (that would rebuild it). */
  private async applySearch(name: string, search: SearchConfig): Promise<void> {
    const held = (await this.deps.collections.find(this.principal, name))?.rules.search;
    if (held && held.state !== 'failed' && sameSearchConfig(held, search)) return;
    await this.deps.search.put(this.principal, name, { ...search }, NO_PRECONDITION);
  }
}

/** Whether a collection's search configuration reads the same fields with the same minimum. */
function sameSearchConfig(held: SearchConfig | undefined, wanted: SearchConfig): boolean {
  return (
    held !== undefined &&
    held.minTokenLength === wanted.minTokenLength &&
    JSON.stringify(held.fields) === JSON.stringify(wanted.fields)
  );
}
