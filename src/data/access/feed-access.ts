import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { tenantOf, type CustomerPrincipal } from '../../auth';
import { LookupCache } from '../../common/cache/lookup-cache';
import { APP_CONFIG, type AppConfig } from '../../config';
import { EventsService, type ItemReadAccess, type NamedPath } from '../../events';
import { CollectionRegistryRepository } from '../collections/collection-registry.repository';
import { asStored } from '../query/live-filter';
import { accessPlanOf, type AccessTarget } from './access-plan';
import { refuseProtectedPaths, withoutProtected } from './protected-fields';

/** Callers' read accesses kept (per caller and rules text). */
const ACCESSES_MAX = 10_000;

/**
 * The change feed's view of access rules (ItemAccessSource): a caller's read rule and protected
 * fields per collection, from the access plan of the collection's registry entry (cached for
 * REGISTRY_CACHE_MS, as every request reads it), so events, live queries and webhook deliveries
 * are judged by the same plan as the data routes.
 */
@Injectable()
export class FeedAccess implements OnModuleInit {
  private readonly accesses = new Map<string, ItemReadAccess>();
  /** Per namespace: its collections with their rules texts (REGISTRY_CACHE_MS). */
  private readonly lists: LookupCache<{ entries: { name: string; target: AccessTarget }[] }>;

  constructor(
    private readonly events: EventsService,
    private readonly registry: CollectionRegistryRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.lists = new LookupCache({
      ttlMs: config.lifecycle.registryCacheMs,
      max: config.lifecycle.registryCacheSize,
    });
  }

  onModuleInit(): void {
    this.events.registerItemAccess({
      of: (principal, collection) => this.of(principal, collection),
      widerThanOwn: (principal) => this.widerThanOwn(principal),
    });
  }

  async of(principal: CustomerPrincipal, collection: string): Promise<ItemReadAccess> {
    const entry = await this.registry.find(tenantOf(principal), principal.branch, collection);
    return this.accessOf(principal, entry);
  }

  /** A caller's read access per rules text, shared by its readers (its filter compiled once). */
  private accessOf(principal: CustomerPrincipal, target: AccessTarget | null): ItemReadAccess {
    const tag = target?.rules.access?.text ?? '';
    const caller =
      principal.kind === 'sub'
        ? `sub:${principal.clientId}:${principal.accountId}`
        : principal.kind;
    const key = `${caller}\n${tag}`;
    let access = this.accesses.get(key);
    if (!access) {
      access = this.compose(principal, target, tag);
      if (this.accesses.size >= ACCESSES_MAX)
        this.accesses.delete(this.accesses.keys().next().value as string);
      this.accesses.set(key, access);
    }
    return access;
  }

  private compose(
    principal: CustomerPrincipal,
    target: AccessTarget | null,
    tag: string,
  ): ItemReadAccess {
    // The owner field does not matter here: an `own` rule is judged by the event's owner.
    const plan = accessPlanOf(principal, target, 'userId');
    return {
      tag,
      byOwner: plan.readByOwner,
      readable: (item) => plan.read.matches(asStored(item)),
      strip: (item) => withoutProtected(plan, item),
      refuseProtected: (named: readonly NamedPath[]) => {
        for (const { field, path } of named) refuseProtectedPaths(plan, [path], field);
      },
    };
  }

  /**
   * The collections of the principal's namespace whose read rule reads more than the caller's
   * own items (neither `own` nor `none`).
   */
  async widerThanOwn(principal: CustomerPrincipal): Promise<readonly string[]> {
    const tenant = tenantOf(principal);
    const key = `${tenant.kind}:${tenant.id}:${principal.branch}`;
    const list = await this.lists.load(key, async () => ({
      entries: (await this.registry.listFor(tenant, principal.branch)).map((entry) => ({
        name: entry.name,
        target: entry,
      })),
    }));
    return (list?.entries ?? [])
      .filter(({ target }) => {
        const { read, readByOwner } = accessPlanOf(principal, target, 'userId');
        return !read.none && !readByOwner;
      })
      .map(({ name }) => name);
  }
}
