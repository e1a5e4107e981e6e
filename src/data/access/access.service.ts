import { Inject, Injectable } from '@nestjs/common';
import { tenantOf, type CustomerPrincipal } from '../../auth';
import { PreconditionFailedError } from '../../common/errors';
import { ifMatchHolds, type IfMatch } from '../../common/http/etag';
import { FallbackWriteQueue } from '../../common/mongo/fallback-database';
import { APP_CONFIG, type AppConfig } from '../../config';
import { CollectionRegistryRepository } from '../collections/collection-registry.repository';
import type { RegisteredCollection } from '../collections/registered-collection';
import { CollectionsService } from '../collections/collections.service';
import { CollectionNotFoundError, ProtectedFieldError } from '../data.errors';
import { protectedSearchField } from '../search/search-config';
import { searchRuleOf } from '../search/search-rule';
import { filterLimits } from '../query/filter-operators';
import {
  type AccessRulesLimits,
  accessRulesTag,
  DEFAULT_ACCESS_RULES,
  readAccessRules,
  type AccessRulesDocument,
  type AccessRulesRule,
} from './access-rules';

/** A collection's access rules as the API shows them, with their ETag. */
export interface AccessRulesView {
  rules: AccessRulesDocument;
  /** When they were last set; null: the collection never had rules written (the defaults hold). */
  changedAt: Date | null;
  etag: string;
}

/**
 * A collection's access rules (root and team keys): read, put and set back to the defaults on
 * its registry entry (docs/data.md, "Access rules"). A change is one conditional update of the
 * entry, filtered on the rules text that If-Match was checked against, so a change made in
 * between is never overwritten; it is one `updated` event of the collection, in force on this
 * instance at once and on every other one within REGISTRY_CACHE_MS. FerretDB does not re-check
 * an update's filter at write time: changes of one entry are also queued in this process
 * (FallbackWriteQueue), which makes one instance exact there; several instances on one FerretDB
 * need MongoDB for an exact If-Match, as item writes do.
 */
@Injectable()
export class AccessRulesService {
  private readonly limits: AccessRulesLimits;

  constructor(
    private readonly collections: CollectionsService,
    private readonly registry: CollectionRegistryRepository,
    private readonly queue: FallbackWriteQueue,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limits = {
      ...filterLimits(config.limits),
      maxProtectedFields: config.limits.accessMaxProtectedFields,
    };
  }

  /** The rules of an existing collection (404 COLLECTION_NOT_FOUND when there is none). */
  async get(principal: CustomerPrincipal, name: string): Promise<AccessRulesView> {
    const entry = await this.fresh(principal, name);
    if (!entry) throw new CollectionNotFoundError(name);
    return viewOf(entry.rules.access);
  }

  /** A body read as rules (400 VALIDATION_FAILED naming each wrong member): a manifest's. */
  accept(body: unknown): AccessRulesDocument {
    return readAccessRules(body, this.limits).document;
  }

  /**
   * Sets the rules (members left out take the defaults), creating the collection within the
   * quota when there is none and If-Match is absent.
   */
  put(
    principal: CustomerPrincipal,
    name: string,
    body: unknown,
    ifMatch: IfMatch,
  ): Promise<AccessRulesView> {
    const { document } = readAccessRules(body, this.limits);
    return this.change(principal, name, document, ifMatch, true);
  }

  /** Sets the rules back to the defaults (written out, as a new collection has them). */
  async reset(principal: CustomerPrincipal, name: string, ifMatch: IfMatch): Promise<void> {
    await this.change(principal, name, DEFAULT_ACCESS_RULES, ifMatch, false);
  }

  private change(
    principal: CustomerPrincipal,
    name: string,
    document: AccessRulesDocument,
    ifMatch: IfMatch,
    creating: boolean,
  ): Promise<AccessRulesView> {
    return this.collections.write(principal, name, async (found) => {
      if (!found && (!creating || ifMatch.kind !== 'absent')) {
        if (ifMatch.kind !== 'absent') throw new PreconditionFailedError(null);
        throw new CollectionNotFoundError(name);
      }
      const target = found ?? (await this.collections.register(principal, name));
      return this.queue.run(`access:${target.id}`, () =>
        this.changeEntry(principal, name, document, ifMatch),
      );
    });
  }

  /** Read → check If-Match → write on the condition that the rules are still those read. */
  private async changeEntry(
    principal: CustomerPrincipal,
    name: string,
    document: AccessRulesDocument,
    ifMatch: IfMatch,
  ): Promise<AccessRulesView> {
    const entry = await this.fresh(principal, name);
    if (!entry) throw new CollectionNotFoundError(name);
    const read = entry.rules.access;
    this.check(ifMatch, read);
    // A search field cannot be protected: `q` would tell its words (docs/data.md, "Search").
    const search = searchRuleOf(entry);
    const { sub, public: publicFields } = document.protectedFields;
    const reached = search && protectedSearchField(search.fields, [...sub, ...publicFields]);
    if (reached) throw new ProtectedFieldError('protectedFields', reached.hidden);
    const rule: AccessRulesRule = { text: JSON.stringify(document), changedAt: new Date() };
    const where =
      ifMatch.kind === 'absent'
        ? {}
        : { 'rules.access.text': read ? read.text : { $exists: false } };
    const changed = await this.collections.changeRules(principal, name, { access: rule }, where);
    if (!changed) {
      // The entry went, or another instance changed the rules since they were read.
      const now = await this.fresh(principal, name);
      if (!now) throw new CollectionNotFoundError(name);
      throw new PreconditionFailedError(accessRulesTag(now.rules.access?.text ?? null));
    }
    return viewOf(rule);
  }

  /** `*` holds when rules are written on the entry; a tag when it names the current rules. */
  private check(ifMatch: IfMatch, read: AccessRulesRule | undefined): void {
    const current = accessRulesTag(read?.text ?? null);
    const held = ifMatchHolds(ifMatch, ifMatch.kind === 'any' && !read ? null : current);
    if (!held) throw new PreconditionFailedError(current);
  }

  private fresh(principal: CustomerPrincipal, name: string): Promise<RegisteredCollection | null> {
    return this.registry.find(tenantOf(principal), principal.branch, name, { fresh: true });
  }
}

function viewOf(rule: AccessRulesRule | undefined): AccessRulesView {
  return {
    rules: rule ? (JSON.parse(rule.text) as AccessRulesDocument) : DEFAULT_ACCESS_RULES,
    changedAt: rule ? new Date(rule.changedAt) : null,
    etag: accessRulesTag(rule?.text ?? null),
  };
}
