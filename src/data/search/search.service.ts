import { Inject, Injectable } from '@nestjs/common';
import { tenantOf, type CustomerPrincipal } from '../../auth';
import { PreconditionFailedError } from '../../common/errors';
import { ifMatchHolds, type IfMatch } from '../../common/http/etag';
import { FallbackWriteQueue } from '../../common/mongo/fallback-database';
import { APP_CONFIG, type AppConfig } from '../../config';
import { everyProtectedPath } from '../access/access-rules';
import { CollectionRegistryRepository } from '../collections/collection-registry.repository';
import type { RegisteredCollection } from '../collections/registered-collection';
import type { SearchRunKind } from './search-build.schema';
import { CollectionsService } from '../collections/collections.service';
import { CollectionNotFoundError, ProtectedFieldError, SearchNotFoundError } from '../data.errors';
import { IndexQuota } from '../indexes/index-quota';
import { WORDS_FIELD } from '../query/data.constants';
import { TenantStorage } from '../storage/tenant-storage';
import { SearchBuildRepository } from './search-build.repository';
import { SEARCH_START_MARGIN_MS, SearchBuildRunner } from './search-build.runner';
import { protectedSearchField, readSearchConfig } from './search-config';
import { searchRuleOf, WORDS_INDEX, type SearchRule, type SearchState } from './search-rule';

/** A collection's search configuration as GET /data/{c}/search shows it, with its ETag. */
export interface SearchView {
  fields: string[];
  minTokenLength: number;
  state: SearchState;
  /** Items whose words are written (all of them once `ready`). */
  indexed: number;
  /** Items of the collection. */
  total: number;
  version: number;
  failure?: { code: string; detail: string };
  etag: string;
}

/** The ETag of a configuration: its version (each PUT stores a new one). */
export function searchTag(rule: SearchRule | null): string | null {
  return rule ? `"search-${rule.version}"` : null;
}

/**
 * A collection's search configuration (root and team keys; docs/data.md, "Search"): kept on its
 * registry entry as `rules.search`, with the `search_words` index holding one of the
 * collection's index slots. A PUT stores the next version in state `building` and starts its
 * build (SearchBuildRunner) once every instance writes words; a DELETE removes the configuration,
 * the index and its slot at once, and the words of the items in the background. Changes of one
 * entry are queued in this process (FallbackWriteQueue) and made on the condition that the
 * configuration is still the one read, as access rules are.
 */
@Injectable()
export class SearchService {
  constructor(
    private readonly collections: CollectionsService,
    private readonly registry: CollectionRegistryRepository,
    private readonly storage: TenantStorage,
    private readonly indexes: IndexQuota,
    private readonly records: SearchBuildRepository,
    private readonly runner: SearchBuildRunner,
    private readonly queue: FallbackWriteQueue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The configuration and its build's progress; 404 SEARCH_NOT_FOUND without one. */
  async get(principal: CustomerPrincipal, name: string): Promise<SearchView> {
    const entry = await this.fresh(principal, name);
    if (!entry) throw new CollectionNotFoundError(name);
    const rule = searchRuleOf(entry);
    if (!rule) throw new SearchNotFoundError(name);
    const [total, build] = await Promise.all([
      this.storage.itemsOf(entry).countDocuments({}),
      this.records.findBuild(entry.id, rule.version),
    ]);
    const indexed = rule.state === 'ready' ? total : Math.min(build?.indexed ?? 0, total);
    return viewOf(rule, indexed, total);
  }

  /**
   * Stores the next configuration in state `building` (creating the collection within the quota
   * when there is none and If-Match is absent), claims the index slot, creates the index and
   * starts the build.
   */
  async put(
    principal: CustomerPrincipal,
    name: string,
    body: Record<string, unknown>,
    ifMatch: IfMatch,
  ): Promise<SearchView> {
    const config = readSearchConfig(body, this.config.limits.searchMaxFields);
    return this.collections.write(principal, name, async (found) => {
      if (!found && ifMatch.kind !== 'absent') throw new PreconditionFailedError(null);
      const target = found ?? (await this.collections.register(principal, name));
      return this.queue.run(`search:${target.id}`, async () => {
        const entry = await this.fresh(principal, name);
        if (!entry) throw new CollectionNotFoundError(name);
        const read = searchRuleOf(entry);
        this.check(ifMatch, read);
        const reached = protectedSearchField(
          config.fields,
          everyProtectedPath(entry.rules.access?.text),
        );
        if (reached) throw new ProtectedFieldError('fields', reached.field);
        await this.createIndex(principal, entry);
        const version = Math.max(read?.version ?? 0, await this.records.lastVersion(entry.id)) + 1;
        const rule: SearchRule = { ...config, version, state: 'building', changedAt: new Date() };
        await this.change(principal, name, { search: rule }, read);
        await this.startRun(principal, entry, 'build', version);
        return viewOf(rule, 0, await this.storage.itemsOf(entry).countDocuments({}));
      });
    });
  }

  /**
   * Records a run of the collection's words (a build of `version`, or the clear after a DELETE)
   * and starts it here: it begins REGISTRY_CACHE_MS + a margin from now, once every instance
   * writes (or no longer writes) words with the new configuration.
   */
  private async startRun(
    principal: CustomerPrincipal,
    entry: RegisteredCollection,
    kind: SearchRunKind,
    version: number,
  ): Promise<void> {
    const now = new Date();
    const startAt = new Date(
      now.getTime() + this.config.lifecycle.registryCacheMs + SEARCH_START_MARGIN_MS,
    );
    const run = await this.records.insertRunning(
      entry,
      tenantOf(principal),
      principal.branch,
      kind,
      version,
      startAt,
      this.runner.leaseFrom(now),
    );
    if (run) this.runner.start(run);
  }

  /**
   * Removes the configuration, drops the index and gives its slot back; the items' words are
   * removed in the background once no instance writes them any more.
   */
  async remove(principal: CustomerPrincipal, name: string, ifMatch: IfMatch): Promise<void> {
    await this.collections.write(principal, name, async (found) => {
      if (!found) throw new CollectionNotFoundError(name);
      await this.queue.run(`search:${found.id}`, async () => {
        const entry = await this.fresh(principal, name);
        if (!entry) throw new CollectionNotFoundError(name);
        const read = searchRuleOf(entry);
        if (!read) throw new SearchNotFoundError(name);
        this.check(ifMatch, read);
        await this.change(principal, name, { search: null }, read);
        const indexes = await this.storage.listIndexes(entry);
        if (indexes.some((index) => index.name === WORDS_INDEX))
          await this.storage.dropIndex(entry, WORDS_INDEX);
        await this.indexes.release(entry, WORDS_INDEX);
        await this.startRun(principal, entry, 'clear', read.version);
      });
    });
  }

  /** Claims the `search_words` slot (kept by a later PUT) and creates the multikey index. */
  private async createIndex(
    principal: CustomerPrincipal,
    entry: RegisteredCollection,
  ): Promise<void> {
    const existing = await this.storage.listIndexes(entry);
    if (existing.some((index) => index.name === WORDS_INDEX)) return;
    const claim = await this.indexes.claim(tenantOf(principal), entry, WORDS_INDEX, existing);
    try {
      await this.storage.createIndex(entry, WORDS_INDEX, { [WORDS_FIELD]: 1 }, false);
    } catch (error) {
      if (claim === 'claimed') await this.indexes.release(entry, WORDS_INDEX);
      throw error;
    }
  }

  /** The registry change, on the condition that the configuration is still the one read. */
  private async change(
    principal: CustomerPrincipal,
    name: string,
    change: { search: SearchRule | null },
    read: SearchRule | null,
  ): Promise<void> {
    const where = read
      ? { 'rules.search.version': read.version }
      : { 'rules.search': { $exists: false } };
    if (await this.collections.changeRules(principal, name, change, where)) return;
    // The entry went, or another instance changed the configuration since it was read.
    const now = await this.fresh(principal, name);
    if (!now) throw new CollectionNotFoundError(name);
    throw new PreconditionFailedError(searchTag(searchRuleOf(now)));
  }

  /** `*` holds when there is a configuration; a tag when it names the current one. */
  private check(ifMatch: IfMatch, read: SearchRule | null): void {
    const current = searchTag(read);
    if (!ifMatchHolds(ifMatch, current)) throw new PreconditionFailedError(current);
  }

  private fresh(principal: CustomerPrincipal, name: string): Promise<RegisteredCollection | null> {
    return this.registry.find(tenantOf(principal), principal.branch, name, { fresh: true });
  }
}

function viewOf(rule: SearchRule, indexed: number, total: number): SearchView {
  return {
    fields: rule.fields,
    minTokenLength: rule.minTokenLength,
    state: rule.state,
    indexed,
    total,
    version: rule.version,
    ...(rule.failure ? { failure: rule.failure } : {}),
    etag: searchTag(rule) as string,
  };
}
