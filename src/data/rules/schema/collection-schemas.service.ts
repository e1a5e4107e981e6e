import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../config';
import type { CustomerPrincipal } from '../../../auth';
import type { RegisteredCollection } from '../../collections/collection-registry.repository';
import { CollectionsService } from '../../collections/collections.service';
import { CollectionNotFoundError } from '../../data.errors';
import { TransferItemsRepository } from '../../transfer/transfer-items.repository';
import type { SchemaAction, SchemaRule } from '../collection-rules';
import { ItemSchemas, type SchemaError } from './item-schemas';
import { SchemaNotFoundError } from './schema.errors';

export interface SchemaView {
  schema: Record<string, unknown>;
  action: SchemaAction;
  changedAt: string;
}

export interface ViolationsPage {
  checked: number;
  violating: number;
  sample: { _id: string; errors: SchemaError[] }[];
  next?: string;
}

/**
 * A collection's schema: put, read and removed by root and team keys. A change never rewrites
 * items; it is an `updated` event of the collection, and in force at once on this instance and
 * within REGISTRY_CACHE_MS on every other one.
 */
@Injectable()
export class CollectionSchemas {
  /** Violating items a page of GET /data/{c}/schema-violations shows (SCHEMA_MAX_ERRORS). */
  private readonly sampleSize: number;

  constructor(
    private readonly collections: CollectionsService,
    private readonly schemas: ItemSchemas,
    private readonly transfers: TransferItemsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.sampleSize = config.limits.schemaMaxErrors;
  }

  /** Sets the schema (creating the collection, within the quota, when there is none). */
  async put(
    principal: CustomerPrincipal,
    name: string,
    schema: unknown,
    action: SchemaAction,
  ): Promise<SchemaView> {
    return this.putAccepted(principal, name, this.schemas.accept(schema), action);
  }

  /** Sets a schema already accepted (ItemSchemas.accept gave its text): an import's manifest's. */
  async putAccepted(
    principal: CustomerPrincipal,
    name: string,
    text: string,
    action: SchemaAction,
  ): Promise<SchemaView> {
    const rule: SchemaRule = { text, action, changedAt: new Date() };
    const changed = await this.collections.writeCreating(principal, name, () =>
      this.collections.changeRules(principal, name, { schema: rule }),
    );
    if (!changed) throw new CollectionNotFoundError(name);
    return viewOf(rule);
  }

  async get(principal: CustomerPrincipal, name: string): Promise<SchemaView> {
    return viewOf((await this.withSchema(principal, name)).rule);
  }

  async remove(principal: CustomerPrincipal, name: string): Promise<void> {
    const changed = await this.collections.write(principal, name, async (entry) => {
      schemaOf(entry, name);
      return this.collections.changeRules(principal, name, { schema: null });
    });
    if (!changed) throw new CollectionNotFoundError(name);
  }

  /**
   * One page of the items in `_id` order after `after`, checked against the schema (nothing is
   * written): bounded work per request, however large the collection.
   */
  async violations(
    principal: CustomerPrincipal,
    name: string,
    page: { limit: number; after: string | null; ownerField: string },
  ): Promise<ViolationsPage> {
    const { limit, after, ownerField } = page;
    const { entry, rule } = await this.withSchema(principal, name);
    const items = await this.transfers.inIdOrder(entry, null, after, limit).limit(limit).toArray();
    const found: ViolationsPage = { checked: items.length, violating: 0, sample: [] };
    // The page's checks within one SCHEMA_CHECK_MAX_MS.
    this.schemas.checkAll(rule.text, items, ownerField, (errors, item) => {
      if (errors.length === 0) return;
      found.violating += 1;
      if (found.sample.length < this.sampleSize)
        found.sample.push({ _id: item._id as string, errors });
    });
    const last = items.at(-1);
    if (items.length === limit && last) found.next = last._id;
    return found;
  }

  private async withSchema(
    principal: CustomerPrincipal,
    name: string,
  ): Promise<{ entry: RegisteredCollection; rule: SchemaRule }> {
    return schemaOf(await this.collections.find(principal, name), name);
  }
}

/** A collection with its schema: 404 when there is no collection, or it has no schema. */
function schemaOf(
  entry: RegisteredCollection | null,
  name: string,
): { entry: RegisteredCollection; rule: SchemaRule } {
  if (!entry) throw new CollectionNotFoundError(name);
  if (!entry.rules.schema) throw new SchemaNotFoundError(name);
  return { entry, rule: entry.rules.schema };
}

function viewOf(rule: SchemaRule): SchemaView {
  return {
    schema: JSON.parse(rule.text) as Record<string, unknown>,
    action: rule.action,
    changedAt: new Date(rule.changedAt).toISOString(),
  };
}
