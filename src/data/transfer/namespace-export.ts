import type { AccessRulesDocument } from '../access/access-rules';
import { WORDS_INDEX } from '../search/search-rule';
import { Injectable } from '@nestjs/common';
import { MongoServerError } from 'mongodb';
import type { Tenant } from '../../auth';
import { ValidationFailedError } from '../../common/errors';
import { EventsService } from '../../events';
import { CollectionRegistryRepository } from '../collections/collection-registry.repository';
import type { RegisteredCollection } from '../collections/collection-registry.repository';
import { CollectionNotFoundError } from '../data.errors';
import { toItemJson } from '../items/dto/data-item.dto';
import { ItemsRepository } from '../items/items.repository';
import type { MatchScope, OwnerScope } from '../query/data-query';
import type { AccessPlan } from '../access/access-plan';
import { withoutProtected } from '../access/protected-fields';
import { TenantStorage, type StoredItem } from '../storage/tenant-storage';
import { hasExpired } from '../rules/expiry/expiry-time';
import { TransferItemsRepository } from './transfer-items.repository';
import { FileExport } from './file-export';
import {
  FILES_RESUME,
  FORMAT,
  parseResumePoint,
  RecordDigest,
  type ItemRecord,
  type ManifestCollection,
  type NamespaceManifest,
} from './transfer-format';

/** The reader's access plan in one collection (src/data/access/access-plan.ts). */
export type AccessOf = (entry: RegisteredCollection) => AccessPlan;

/** Items read from the database per round trip of an export. */
const EXPORT_BATCH = 500;

/** MongoDB's CursorNotFound: the server let an idle cursor go (a client that reads slowly). */
const CURSOR_NOT_FOUND = 43;

/** What an export reads: one namespace (tenant and branch), a sub key's items or all of them. */
export interface ExportSource {
  tenant: Tenant;
  branch: string;
  /** A sub key's own account: the manifest names it, and only its files are exported. */
  owner: OwnerScope | null;
  /**
   * The reader's access plan in a collection (absent: every item, nothing protected): its read
   * rule confines the items and counts, its protected fields are left out of every item line.
   */
  access?: AccessOf;
  /** The collections the reader's key may read (absent: every one); the others are left out. */
  readable?: (collection: string) => boolean;
}

export interface ExportRequest {
  /** `collections=`: these only (each must exist); null: every collection of the namespace. */
  collections: string[] | null;
  /** `after=<collection>/<_id>` or `~files/<file id>`: resume after this item or file. */
  after: string | null;
  /** Whether the namespace's files come after the items. */
  files: boolean;
}

/**
 * GET /export: a namespace as NDJSON (transfer-format.ts), read as the client takes it — one
 * cursor per collection in `_id` order, EXPORT_BATCH items per round trip — so memory stays flat
 * in the number of items. Nothing is locked: writes go on, and the manifest's feedPosition, read
 * before any item, is where GET /events gives every change the export may have missed.
 */
@Injectable()
export class NamespaceExport {
  constructor(
    private readonly registry: CollectionRegistryRepository,
    private readonly items: ItemsRepository,
    private readonly transfers: TransferItemsRepository,
    private readonly storage: TenantStorage,
    private readonly events: EventsService,
    private readonly fileExport: FileExport,
  ) {}

  /** The export's lines: manifest, items, files, end. Refusals come with the first line, before any is sent. */
  async *lines(source: ExportSource, request: ExportRequest): AsyncGenerator<string> {
    const entries = await this.selected(source, request.collections);
    const resume = request.after === null ? null : resumePoint(request.after);
    const feedPosition = await this.feedPosition(source);
    const namespace = { ...source.tenant, branch: source.branch };
    const fileOwner = source.owner?.value ?? null;
    const manifest: NamespaceManifest = {
      type: 'manifest',
      format: FORMAT,
      exportedAt: new Date().toISOString(),
      namespace: { kind: source.tenant.kind, branch: source.branch },
      ...(source.owner ? { owner: source.owner } : {}),
      feedPosition,
      ...(request.after !== null ? { after: request.after } : {}),
      collections: await this.describe(entries, source.access ?? null),
      ...(request.files ? { files: await this.fileExport.totals(namespace, fileOwner) } : {}),
    };
    yield JSON.stringify(manifest);
    const digest = new RecordDigest();
    for (const entry of entries) {
      // Names are ASCII: JavaScript and the database order them alike.
      if (resume && entry.name < resume.collection) continue;
      const afterId = resume?.collection === entry.name ? resume.id : null;
      const plan = source.access?.(entry) ?? null;
      for await (const line of this.itemLines(entry, plan, afterId)) {
        digest.add(line);
        yield line;
      }
    }
    if (request.files) {
      const afterFile = resume?.collection === FILES_RESUME ? resume.id : null;
      for await (const { line, file } of this.fileExport.lines(namespace, fileOwner, afterFile)) {
        if (file) digest.addFile(line);
        else digest.add(line);
        yield line;
      }
    }
    yield JSON.stringify(digest.end(request.files));
  }

  /** The collections of a namespace as a manifest lists them (an account export's per branch). */
  async describe(
    entries: RegisteredCollection[],
    planOf: AccessOf | null,
  ): Promise<ManifestCollection[]> {
    const described: ManifestCollection[] = [];
    for (const entry of entries) {
      // `_id_` is every collection's; the search configuration's index comes with `search`.
      const indexes = (await this.storage.listIndexes(entry)).filter(
        (i) => i.name !== '_id_' && i.name !== WORDS_INDEX,
      );
      const count = await this.items.count(entry, {
        scope: planOf?.(entry).read ?? null,
        conditions: [],
      });
      const { schema, expiry, access, search } = entry.rules;
      const full = planOf === null || planOf(entry).caller === 'full';
      described.push({
        name: entry.name,
        indexes,
        count,
        ...(schema
          ? {
              schema: {
                schema: JSON.parse(schema.text) as Record<string, unknown>,
                action: schema.action,
              },
            }
          : {}),
        ...(expiry ? { expiry: { field: expiry.field, afterSeconds: expiry.afterSeconds } } : {}),
        // A sub key's export names no access rules: they are root and team keys' to read.
        ...(access && full ? { access: JSON.parse(access.text) as AccessRulesDocument } : {}),
        // The configuration only (a target builds its own words); root and team keys' as well.
        ...(search && full
          ? { search: { fields: search.fields, minTokenLength: search.minTokenLength } }
          : {}),
      });
    }
    return described;
  }

  /**
   * The item lines of one collection, after `afterId`, as the reader's access plan lets it read
   * them (null: all, whole); `branch` names it (an account export).
   */
  async *itemLines(
    entry: RegisteredCollection,
    plan: AccessPlan | null,
    afterId: string | null,
    branch?: string,
  ): AsyncGenerator<string> {
    for await (const item of this.itemsOf(entry, plan?.read ?? null, afterId)) {
      const record: ItemRecord = {
        type: 'item',
        ...(branch !== undefined ? { branch } : {}),
        collection: entry.name,
        item: toItemJson(plan ? withoutProtected(plan, item) : item),
      };
      yield JSON.stringify(record);
    }
  }

  /** A tenant's collections in every branch (an account export spans them). */
  inEveryBranch(tenant: Tenant): Promise<(RegisteredCollection & { branch: string })[]> {
    return this.registry.listInEveryBranch(tenant);
  }

  /** The newest event of the namespace before the export reads anything; null without a feed. */
  async feedPosition(source: Pick<ExportSource, 'tenant' | 'branch'>): Promise<string | null> {
    if (!this.events.enabled) return null;
    return String(await this.events.latest(source.tenant, source.branch));
  }

  /**
   * The items in `_id` order through one cursor; should the server drop it (idle too long, the
   * client reading slowly), a new one goes on after the last item read.
   */
  private async *itemsOf(
    entry: RegisteredCollection,
    scope: MatchScope | null,
    afterId: string | null,
  ): AsyncGenerator<StoredItem> {
    let last = afterId;
    const rule = entry.rules.expiry;
    for (;;) {
      const cursor = this.transfers.inIdOrder(entry, scope, last, EXPORT_BATCH);
      try {
        for await (const item of cursor) {
          last = item._id;
          // The cursor's filter left out what had expired when it began; this, what has since.
          if (rule && hasExpired(rule, item, Date.now())) continue;
          yield item;
        }
        return;
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === CURSOR_NOT_FOUND)) throw error;
      } finally {
        await cursor.close().catch(() => undefined);
      }
    }
  }

  /** The namespace's collections the export covers, by name. */
  private async selected(
    source: ExportSource,
    names: string[] | null,
  ): Promise<RegisteredCollection[]> {
    const { readable } = source;
    const listed = await this.registry.listFor(source.tenant, source.branch);
    const all = readable ? listed.filter((entry) => readable(entry.name)) : listed;
    if (names === null) return all;
    const byName = new Map(all.map((entry) => [entry.name, entry]));
    const missing = names.find((name) => !byName.has(name));
    if (missing !== undefined) throw new CollectionNotFoundError(missing);
    return [...new Set(names)]
      .sort()
      .map((name) => byName.get(name))
      .filter((entry): entry is RegisteredCollection => entry !== undefined);
  }
}

/**
 * `after=<collection>/<_id>`: a place in the export's order (collection name, then `_id`), which
 * need not hold an item — nor a collection: the items after it are those of the collections after
 * it by name. `~files/<file id>`: after every item, and after that file (in `_id` order).
 */
function resumePoint(after: string): { collection: string; id: string } {
  const point = parseResumePoint(after);
  if (!point || (point.collection === FILES_RESUME && !/^[0-9a-f]{24}$/.test(point.id)))
    throw new ValidationFailedError([
      { field: 'after', message: 'must be <collection>/<_id> or ~files/<file id>' },
    ]);
  return point;
}
