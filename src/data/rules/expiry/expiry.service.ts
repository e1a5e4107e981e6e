import { Inject, Injectable } from '@nestjs/common';
import { tenantOf, type CustomerPrincipal } from '../../../auth';
import { ValidationFailedError } from '../../../common/errors';
import { APP_CONFIG, type AppConfig } from '../../../config';
import { CollectionRegistryRepository } from '../../collections/collection-registry.repository';
import { CollectionsService } from '../../collections/collections.service';
import { CollectionNotFoundError, ExpiryNotFoundError } from '../../data.errors';
import { MANAGED_FIELDS } from '../../query/data.constants';
import { TIMESTAMP_FIELDS } from '../../query/filter-operators';
import { fieldPathProblem } from '../../query/json-guard';
import type { ExpiryRule } from '../collection-rules';

/**
 * A collection's expiry rule (root and team keys): set, read and removed on its registry entry;
 * each change is an `updated` event of the collection. The instance that changes it applies it
 * at once, every other one within REGISTRY_CACHE_MS. Reads hide expired items (live-items.ts),
 * the sweep deletes them (expiry-sweep.ts).
 */
@Injectable()
export class ExpiryService {
  constructor(
    private readonly collections: CollectionsService,
    private readonly registry: CollectionRegistryRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async get(principal: CustomerPrincipal, collection: string): Promise<ExpiryRule> {
    const rule = (await this.fresh(principal, collection))?.rules.expiry;
    if (!rule) throw new ExpiryNotFoundError(collection);
    return rule;
  }

  /** Sets the rule, creating the collection (within the quota) when it does not exist. */
  async set(
    principal: CustomerPrincipal,
    collection: string,
    request: { field: string; afterSeconds: number },
  ): Promise<ExpiryRule> {
    this.check(request);
    const rule: ExpiryRule = { ...request, changedAt: new Date() };
    const changed = await this.collections.writeCreating(principal, collection, () =>
      this.collections.changeRules(principal, collection, { expiry: rule }),
    );
    if (!changed) throw new CollectionNotFoundError(collection);
    return rule;
  }

  async remove(principal: CustomerPrincipal, collection: string): Promise<void> {
    const changed = await this.collections.write(principal, collection, async () => {
      const entry = await this.fresh(principal, collection);
      if (!entry?.rules.expiry) throw new ExpiryNotFoundError(collection);
      return this.collections.changeRules(principal, collection, { expiry: null });
    });
    if (!changed) throw new ExpiryNotFoundError(collection);
  }

  private fresh(principal: CustomerPrincipal, collection: string) {
    return this.registry.find(tenantOf(principal), principal.branch, collection, { fresh: true });
  }

  /** `field` names a time the rule can read; `afterSeconds` is within EXPIRY_MAX_SECONDS. */
  check(request: { field: string; afterSeconds: number }): void {
    const { field, afterSeconds } = request;
    const problem = fieldPathProblem(field);
    const [first = ''] = field.split('.');
    const errors = [];
    if (problem) errors.push({ field: 'field', message: `field path ${problem}` });
    else if (MANAGED_FIELDS.has(first) && !TIMESTAMP_FIELDS.has(field))
      errors.push({
        field: 'field',
        message: 'must be _createdAt, _updatedAt or a field of the client, not _id or inside one',
      });
    const max = this.config.lifecycle.expiryMaxSeconds;
    if (afterSeconds > max)
      errors.push({ field: 'afterSeconds', message: `must not be greater than ${max}` });
    if (errors.length > 0) throw new ValidationFailedError(errors);
  }
}
